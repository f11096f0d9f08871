package org.zrm.changesource.pg.internal.types;

/** A Postgres value whose text could not be converted (e.g. a timestamp with a seconds offset). */
public final class PgValueFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public PgValueFormatException(String message) {
        super(message);
    }

    public PgValueFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
