package org.zrm.config;

import java.util.Objects;

/**
 * One rejected setting of a configuration: the key and why its value is not accepted.
 *
 * @param key the configuration property, e.g. {@code changeLogBatchSize}
 * @param reason a sentence an operator can act on; it must not contain a secret value (the
 *        validator of a secret setting says what is wrong without quoting the value)
 */
public record ConfigProblem(String key, String reason) {

    /**
     * @throws NullPointerException if {@code key} or {@code reason} is null
     */
    public ConfigProblem {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(reason, "reason");
    }
}
