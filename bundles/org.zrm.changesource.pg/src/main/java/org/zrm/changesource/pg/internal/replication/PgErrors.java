package org.zrm.changesource.pg.internal.replication;

import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.secret.Secrets;

/** Maps Postgres errors to the change-source exception types, with a hint of what to do. */
public final class PgErrors {

    private static final Logger LOG = LoggerFactory.getLogger(PgErrors.class);

    /** {@code object_in_use}: "replication slot … is active for PID …". */
    public static final String OBJECT_IN_USE = "55006";
    /** {@code object_not_in_prerequisite_state}: e.g. an invalidated slot, or wal_level too low. */
    public static final String OBJECT_NOT_IN_PREREQUISITE_STATE = "55000";
    /** {@code admin_shutdown}: our backend was terminated, normally by another replication manager. */
    public static final String ADMIN_SHUTDOWN = "57P01";
    public static final String INVALID_PASSWORD = "28P01";
    public static final String INVALID_AUTHORIZATION = "28000";
    public static final String UNDEFINED_OBJECT = "42704";

    private PgErrors() {}

    /**
     * @param what what was being done, with ids (slot)
     * @param e the failure
     * @return the exception to throw: an abort for 57P01 (the slot was taken over), otherwise a
     *     retryable failure whose message says what to do where that is known
     */
    public static ChangeSourceException translate(String what, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String detail = Secrets.maskUrls(String.valueOf(e.getMessage()));
        if (state.equals(ADMIN_SHUTDOWN)) {
            return new ChangeSourceAbortedException(what + ": shutdown signal received (e.g. another"
                    + " replication manager taking over the replication stream): " + detail, e);
        }
        return new ChangeSourceException(what + ": " + detail + hint(state, detail), e);
    }

    /** @return an advice suffix for well-known failures, or "" */
    public static String hint(String state, String message) {
        if (state.equals(INVALID_PASSWORD) || state.equals(INVALID_AUTHORIZATION)) {
            return " (authentication failed: check the user and password in upstream.db)";
        }
        if (state.startsWith("08")) {
            return " (connection failed: check that the upstream database is reachable at upstream.db)";
        }
        if (state.equals(UNDEFINED_OBJECT) && message.contains("publication")) {
            return " (create the publication upstream or correct app.publications)";
        }
        if (message.contains("wal_level")) {
            return " (set wal_level = logical in postgresql.conf and restart Postgres)";
        }
        return "";
    }

    /** Closes a resource, logging (not throwing) a failure: used on paths that already failed. */
    public static void closeQuietly(AutoCloseable c, String what) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("closing {}: {}", what, e.toString());
        }
    }
}
