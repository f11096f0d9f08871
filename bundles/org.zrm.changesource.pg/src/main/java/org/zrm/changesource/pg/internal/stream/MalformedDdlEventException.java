package org.zrm.changesource.pg.internal.stream;

/**
 * A DDL event message that is not JSON or does not have the event format (upstream's schema
 * validation error). The change maker turns it into {@code reset-required} with
 * {@code reason = "MalformedDdlEventException: <message>"}.
 */
public final class MalformedDdlEventException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MalformedDdlEventException(String message) {
        super(message);
    }

    public MalformedDdlEventException(String message, Throwable cause) {
        super(message, cause);
    }
}
