package org.zrm.changesource.endpoint.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * The endpoint's secret. Requests are compared through SHA-256 digests with
 * {@link MessageDigest#isEqual}, so the time taken depends neither on where the first differing
 * character is nor on the length of the candidate. The secret itself is never rendered:
 * {@link #toString()} is a mask.
 */
final class ApiKey {

    private final byte[] digest;

    /** @param secret the configured key, non-empty */
    ApiKey(String secret) {
        Objects.requireNonNull(secret, "secret");
        if (secret.isEmpty()) {
            throw new IllegalArgumentException("the API key must not be empty");
        }
        this.digest = sha256(secret);
    }

    /** @return whether {@code candidate} (possibly {@code null}) is the configured key */
    boolean matches(String candidate) {
        // A missing key is compared like any other so that both paths take the same time.
        byte[] other = sha256(candidate == null ? "" : candidate);
        return MessageDigest.isEqual(digest, other) && candidate != null;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            // Every Java platform must provide SHA-256.
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    @Override
    public String toString() {
        return org.zrm.secret.Secrets.MASK;
    }
}
