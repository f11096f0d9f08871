package org.zrm.changesource.pg.internal.setup;

/** A published table that cannot be replicated (upstream {@code UnsupportedTableSchemaError}). */
public final class UnsupportedTableSchemaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UnsupportedTableSchemaException(String message) {
        super(message);
    }
}
