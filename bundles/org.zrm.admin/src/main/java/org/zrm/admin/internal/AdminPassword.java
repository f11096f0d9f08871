package org.zrm.admin.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Locale;

/**
 * zero-cache's admin password ({@code ZERO_ADMIN_PASSWORD}) for the operator endpoints. Accepted as
 * HTTP basic auth with any user name (zero-cache's rule) or as a bearer token (what Prometheus'
 * {@code authorization} setting sends). Compared in constant time. An empty password leaves the
 * endpoints open, as a node without one configured has always been.
 */
final class AdminPassword {

    private final byte[] expected;

    AdminPassword(String password) {
        this.expected = password == null ? new byte[0] : password.getBytes(StandardCharsets.UTF_8);
    }

    boolean required() {
        return expected.length > 0;
    }

    /**
     * @param authorization the request's {@code Authorization} header, or {@code null}
     * @return whether the request may see the endpoint
     */
    boolean permits(String authorization) {
        if (!required()) {
            return true;
        }
        byte[] given = offered(authorization);
        // MessageDigest.isEqual does not stop at the first difference; a length mismatch still
        // compares the expected bytes with themselves, so that timing tells nothing.
        if (given.length != expected.length) {
            MessageDigest.isEqual(expected, expected);
            return false;
        }
        return MessageDigest.isEqual(given, expected);
    }

    private static byte[] offered(String authorization) {
        if (authorization == null) {
            return new byte[0];
        }
        String header = authorization.strip();
        String scheme = header.contains(" ") ? header.substring(0, header.indexOf(' ')).toLowerCase(Locale.ROOT) : "";
        String value = header.contains(" ") ? header.substring(header.indexOf(' ') + 1).strip() : "";
        if (scheme.equals("bearer")) {
            return value.getBytes(StandardCharsets.UTF_8);
        }
        if (scheme.equals("basic")) {
            try {
                String decoded = new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                return (colon < 0 ? "" : decoded.substring(colon + 1)).getBytes(StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return new byte[0]; // not Base64: no password offered
            }
        }
        return new byte[0];
    }
}
