package org.zrm.launcher;

import java.util.Objects;
import java.util.Optional;

/**
 * One environment variable the launcher knows about.
 *
 * @param name the variable's name, e.g. {@code ZERO_APP_ID}
 * @param defaultValue the value used when it is unset, or {@code null} when there is none (or it is
 *     derived from other variables; the description says how)
 * @param description one line for {@code zrm env} and the launch report
 * @param secret whether its value must never be printed (it is shown as {@code ****})
 */
public record EnvVar(String name, String defaultValue, String description, boolean secret) {
    /** Checks the name; a record canonical constructor. */
    public EnvVar {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
    }

    /** @return the default, if there is a literal one */
    public Optional<String> defaultValueIfAny() {
        return Optional.ofNullable(defaultValue);
    }
}
