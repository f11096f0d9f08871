package org.zrm.changesource.pg.internal.stream;

import java.util.Map;
import java.util.Objects;
import org.zrm.protocol.JsonValues;

/**
 * A schema change that cannot be replicated (upstream {@code UnsupportedSchemaChangeError}): a
 * table of the new schema fails validation, or the diff itself failed. The message is upstream's
 * ({@code Replication halted. Resync the replica to recover: <description>}); the change maker
 * reports {@link #description()} as {@code errorDetails.reason} and {@link #context()} (the
 * trigger's context, with the {@code query}) as {@code errorDetails.context}.
 */
public final class UnsupportedSchemaChangeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String description;
    private final transient Map<String, Object> context;

    /**
     * @param description what is unsupported, in the form of JavaScript's {@code String(error)}
     *     ({@code "<ErrorName>: <message>"}), as upstream reports it
     * @param context the event's context
     * @param cause the underlying error
     */
    public UnsupportedSchemaChangeException(String description, Map<String, Object> context, Throwable cause) {
        super("Replication halted. Resync the replica to recover: " + description, cause);
        this.description = Objects.requireNonNull(description, "description");
        this.context = JsonValues.freezeObject(context);
    }

    /** The description ({@code errorDetails.reason}). */
    public String description() {
        return description;
    }

    /** The event's context ({@code errorDetails.context}). */
    public Map<String, Object> context() {
        return context;
    }
}
