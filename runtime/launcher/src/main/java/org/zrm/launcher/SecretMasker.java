package org.zrm.launcher;

import java.util.regex.Pattern;

/**
 * Hides secrets in values before they are printed: the whole value of a variable flagged secret,
 * and the password inside any URL ({@code postgresql://user:****@host/db}) or URL query
 * ({@code ?password=****}), whatever the variable.
 */
public final class SecretMasker {
    /** What a hidden value looks like. */
    public static final String MASK = "****";
    // scheme://user:password@ anywhere in the text (also inside "-Dx=..." options); the password is
    // everything up to the last '@' before the path, since passwords may contain '@'.
    private static final Pattern URL_PASSWORD = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\\s]*):[^/?#\\s]*@");
    private static final Pattern QUERY_PASSWORD = Pattern.compile("([?&](?:password|sslpassword)=)[^&#\\s]*", Pattern.CASE_INSENSITIVE);

    private SecretMasker() {}

    /** @return {@code value} as it may be printed for variable {@code name} */
    public static String mask(String name, String value) {
        if (value == null) {
            return null;
        }
        if (EnvRegistry.find(name).map(EnvVar::secret).orElse(false)) {
            return MASK;
        }
        return maskUrl(value);
    }

    /** @return {@code value} with the password of a URL (user-info or query parameter) replaced by {@value #MASK} */
    public static String maskUrl(String value) {
        String masked = URL_PASSWORD.matcher(value).replaceAll("$1:" + MASK + "@");
        return QUERY_PASSWORD.matcher(masked).replaceAll("$1" + MASK);
    }
}
