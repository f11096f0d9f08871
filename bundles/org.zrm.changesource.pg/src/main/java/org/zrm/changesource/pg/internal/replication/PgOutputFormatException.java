package org.zrm.changesource.pg.internal.replication;

/** A replication message that does not follow the pgoutput v1 / streaming-replication format. */
public final class PgOutputFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PgOutputFormatException(String message) {
        super(message);
    }

    public PgOutputFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
