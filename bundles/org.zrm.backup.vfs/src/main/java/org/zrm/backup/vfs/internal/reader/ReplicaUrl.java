package org.zrm.backup.vfs.internal.reader;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Builds {@code LITESTREAM_REPLICA_URL} for the VFS from the backup URL and the S3 endpoint and
 * region (upstream {@code buildLitestreamVfsReplicaURL}): the VFS reads only the URL, while
 * {@code litestream replicate} takes endpoint and region from its config file.
 */
public final class ReplicaUrl {

    private static final Pattern SCHEME = Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*):");

    private ReplicaUrl() {
    }

    /**
     * @param backupURL {@code litestream.backupURL}
     * @param endpoint the S3 endpoint, or {@code null}/empty for none
     * @param region the S3 region, or {@code null}/empty for none
     * @return {@code backupURL} unchanged when neither endpoint nor region is given or the scheme is
     *     not {@code s3}; otherwise {@code backupURL} with {@code endpoint} and {@code region} query
     *     parameters added, each only if the URL does not already carry it (form-encoded as a
     *     WHATWG {@code URLSearchParams} would; existing parameters are kept verbatim)
     * @throws IllegalArgumentException if endpoint or region is given and {@code backupURL} has no
     *     URL scheme (upstream's {@code new URL} throws "Invalid URL" there)
     */
    public static String build(String backupURL, String endpoint, String region) {
        boolean hasEndpoint = endpoint != null && !endpoint.isEmpty();
        boolean hasRegion = region != null && !region.isEmpty();
        if (!hasEndpoint && !hasRegion) {
            return backupURL;
        }
        Matcher scheme = SCHEME.matcher(backupURL);
        if (!scheme.find()) {
            throw new IllegalArgumentException("litestream.backupURL is not a URL: " + backupURL);
        }
        if (!scheme.group(1).equalsIgnoreCase("s3")) {
            return backupURL;
        }
        int hash = backupURL.indexOf('#');
        String beforeFragment = hash < 0 ? backupURL : backupURL.substring(0, hash);
        String fragment = hash < 0 ? "" : backupURL.substring(hash);
        int question = beforeFragment.indexOf('?');
        String query = question < 0 ? "" : beforeFragment.substring(question + 1);
        StringBuilder url = new StringBuilder(beforeFragment);
        if (hasEndpoint && !hasParameter(query, "endpoint")) {
            appendParameter(url, "endpoint", endpoint);
        }
        if (hasRegion && !hasParameter(query, "region")) {
            appendParameter(url, "region", region);
        }
        return url.append(fragment).toString();
    }

    private static boolean hasParameter(String query, String name) {
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            if (URLDecoder.decode(key, StandardCharsets.UTF_8).equals(name)) {
                return true;
            }
        }
        return false;
    }

    private static void appendParameter(StringBuilder url, String name, String value) {
        char last = url.charAt(url.length() - 1);
        if (url.indexOf("?") < 0) {
            url.append('?');
        } else if (last != '?' && last != '&') {
            url.append('&');
        }
        url.append(name).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
    }
}
