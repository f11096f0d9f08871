package org.zrm.secret;

import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks secrets before text is logged or printed: the password part of URLs
 * ({@code postgresql://user:secret@host/db} becomes {@code postgresql://user:****@host/db}),
 * {@code password=} query parameters, and whole values of settings whose name says they are
 * secret ({@code ZERO_ADMIN_PASSWORD}, {@code litestream.secretAccessKey}, {@code authToken}).
 *
 * <p>Masking is deliberately over-eager: a value that merely looks like a URL with a password is
 * masked, because a log line can't be taken back.
 */
public final class Secrets {

    /** What a hidden value looks like. */
    public static final String MASK = "****";

    private static final Pattern SECRET_NAME =
            Pattern.compile("password|passwd|secret|token|credential|apikey|api_key|private_key");
    // A scheme is tried only where a run of scheme characters starts: without this, every
    // position inside a long word is a candidate start, and masking takes time quadratic in the
    // text's length (found by the launcher's fuzzer: 5000 characters took over a second).
    private static final String SCHEME_START = "(?<![A-Za-z0-9+.-])";
    // scheme://user:password@ anywhere in the text (also inside "-Dx=..." options). The password runs
    // to the last '@' before the path, because passwords may contain '@' and ':'.
    private static final Pattern URL_PASSWORD =
            Pattern.compile(SCHEME_START + "([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\\s]*):[^/?#\\s]*@");
    private static final Pattern SAFE_USER_INFO = Pattern.compile("[^:/?#@]*(?::\\*\\*\\*\\*)?");
    private static final Pattern QUERY_PASSWORD =
            Pattern.compile("([?&](?:password|sslpassword|passwd|apikey|api_key|token|secret|access_token)=)[^&#\\s]*",
                    Pattern.CASE_INSENSITIVE);

    private Secrets() {
    }

    /**
     * @param name a setting's name, e.g. an environment variable or a configuration property
     * @return whether the name says the whole value is a secret
     */
    public static boolean isSecretName(String name) {
        return SECRET_NAME.matcher(name.toLowerCase(Locale.ROOT)).find();
    }

    /**
     * @param name the setting's name; a secret-looking name masks the whole value
     * @param value the value, of any type; arrays are shown element by element
     * @return the text that may be printed for this setting; {@code "null"} for a null value
     */
    public static String mask(String name, Object value) {
        if (value == null) {
            return "null";
        }
        if (isSecretName(name)) {
            return MASK;
        }
        return maskUrls(value instanceof Object[] array ? Arrays.toString(array) : value.toString());
    }

    /**
     * Second pass, for text the first pattern cannot read as {@code scheme://user:password@} (a
     * password containing '/', a doubled "://"): in each whitespace-separated word, everything from
     * its first "://" to its last '@' is hidden unless it is a plain user name or an already masked
     * {@code user:****}. A scan rather than a pattern, so that it stays linear in the text's length.
     */
    private static String maskOddUserInfo(String text) {
        StringBuilder out = null;
        int n = text.length();
        int wordStart = 0;
        int sep = text.indexOf("://");
        while (wordStart < n) {
            int wordEnd = wordStart;
            int at = -1;
            while (wordEnd < n && !Character.isWhitespace(text.charAt(wordEnd))) {
                if (text.charAt(wordEnd) == '@') {
                    at = wordEnd;
                }
                wordEnd++;
            }
            if (sep >= 0 && sep < wordStart) {
                sep = text.indexOf("://", wordStart);
            }
            if (sep >= 0 && sep < wordEnd && at > sep + 2
                    && !SAFE_USER_INFO.matcher(text.substring(sep + 3, at)).matches()) {
                if (out == null) {
                    out = new StringBuilder(n).append(text, 0, wordStart);
                }
                out.append(text, wordStart, sep + 3).append(MASK).append(text, at, wordEnd);
            } else if (out != null) {
                out.append(text, wordStart, wordEnd);
            }
            int next = wordEnd;
            while (next < n && Character.isWhitespace(text.charAt(next))) {
                next++;
            }
            if (out != null) {
                out.append(text, wordEnd, next);
            }
            wordStart = next;
        }
        return out == null ? text : out.toString();
    }

    /**
     * @param text any text, e.g. a connection URL or a whole command line
     * @return the text with every URL password (user-info or query parameter) replaced by {@value #MASK}
     */
    public static String maskUrls(String text) {
        String masked = text;
        if (text.contains("://")) {
            masked = URL_PASSWORD.matcher(masked).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + ":" + MASK + "@"));
            masked = maskOddUserInfo(masked);
        }
        return QUERY_PASSWORD.matcher(masked).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MASK));
    }
}
