package org.zrm.admin.internal;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hides secrets before a configuration value reaches a log line: whole values of properties whose
 * name says they are secret, and the password part of connection URLs
 * ({@code postgresql://user:secret@host/db} becomes {@code postgresql://user:****@host/db}).
 */
final class SecretMasker {

    static final String MASK = "****";
    private static final Pattern SECRET_NAME = Pattern.compile("password|passwd|secret|token|credential|apikey|api_key");
    private static final Pattern URL_PASSWORD = Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://[^:/@\\s]*):([^@/\\s]*)@");
    private static final Pattern QUERY_PASSWORD = Pattern.compile("(?i)([?&](?:password|sslpassword)=)[^&\\s]*");

    private SecretMasker() {
    }

    static String mask(String key, Object value) {
        if (value == null) {
            return "null";
        }
        if (SECRET_NAME.matcher(key.toLowerCase(Locale.ROOT)).find()) {
            return MASK;
        }
        String text = value instanceof Object[] array ? java.util.Arrays.toString(array) : value.toString();
        return maskUrls(text);
    }

    static String maskUrls(String text) {
        Matcher userInfo = URL_PASSWORD.matcher(text);
        String masked = userInfo.replaceAll(m -> Matcher.quoteReplacement(m.group(1) + ":" + MASK + "@"));
        return QUERY_PASSWORD.matcher(masked).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MASK));
    }
}
