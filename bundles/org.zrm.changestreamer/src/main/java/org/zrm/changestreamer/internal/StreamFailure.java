package org.zrm.changestreamer.internal;

import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;

/**
 * What a failure of the pipeline means for the supervisor (upstream {@code RunningState}'s
 * AbortError/UnrecoverableError rules, spec §1): go on after a back-off, re-sync the replica, or
 * stop. Kept apart from the supervisor so that the rules can be read, and tested, in one place.
 */
enum StreamFailure {

    /** The stream's change source was unregistered; the loop waits for a replacement. */
    SOURCE_REMOVED,
    /** The replica cannot continue its lineage: auto-reset re-syncs it, otherwise the streamer stops. */
    RESET_REQUIRED,
    /** PG 42P01: the change-log schema was dropped or reset by another node; the streamer stops. */
    CHANGE_LOG_GONE,
    /** Retrying cannot help (ownership lost, a malformed stream, a non-retryable source error). */
    FATAL,
    /** Anything else: back off and restart from the change log's last stored watermark. */
    RETRYABLE;

    private static final Logger LOG = LoggerFactory.getLogger(StreamSupervisor.class);

    /**
     * @param t why a stream ended, or {@code null} if it ended without an error
     * @return its class; {@code null} is {@link #RETRYABLE}
     */
    static StreamFailure of(Throwable t) {
        if (t == null) {
            return RETRYABLE;
        }
        if (t instanceof SourceRemovedException) {
            return SOURCE_REMOVED;
        }
        if (requiresReset(t)) {
            return RESET_REQUIRED;
        }
        if (isMissingChangeLog(t)) {
            return CHANGE_LOG_GONE;
        }
        return isFatal(t) ? FATAL : RETRYABLE;
    }

    /** @return whether the streamer stops instead of retrying (a reset request counts as fatal here) */
    static boolean isFatal(Throwable t) {
        if (t instanceof UnrecoverableStreamException || t instanceof OwnershipLostException
                || t instanceof ResetRequiredException) {
            return true;
        }
        if (t instanceof ChangeSourceException e && !e.isRetryable()) {
            return true;
        }
        return isMissingChangeLog(t);
    }

    /** @return whether PG 42P01 appears anywhere in the cause chain */
    static boolean isMissingChangeLog(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException sql && "42P01".equals(sql.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    /** @return whether the replica must be re-synced */
    static boolean requiresReset(Throwable t) {
        return t instanceof ResetRequiredException || t instanceof AutoResetException;
    }

    /**
     * Turns what a stream's thread caught into why the stream ended. A closed stream is reported
     * as the storer's failure when the storer closed it, as {@link SourceRemovedException} when the
     * source went away, and not at all when the streamer is stopping.
     *
     * @param caught the exception the stream loop caught
     * @param storerFailure the storer's failure that closed the stream, or {@code null}
     * @param running whether the streamer is still running
     * @param sourceGone whether the stream's source was unregistered
     * @return the cause, or {@code null} if the stream ended because of a stop
     */
    static Throwable endCause(Exception caught, ChangeLogException storerFailure, boolean running,
            boolean sourceGone) {
        if (caught instanceof ChangeStreamClosedException) {
            if (storerFailure != null) {
                return storerFailure;
            }
            return running ? (sourceGone ? new SourceRemovedException() : caught) : null;
        }
        if (caught instanceof ChangeLogException) {
            return storerFailure != null ? storerFailure : caught;
        }
        if (caught instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return running ? caught : null;
        }
        if (caught instanceof ExecutionException) {
            return caught.getCause();
        }
        return caught;
    }

    /** Logs why a stream ended, at the level its class deserves. */
    static void logStreamEnd(Throwable e) {
        switch (of(e)) {
            case SOURCE_REMOVED -> LOG.info("change-streamer: stream ended: {}", e.getMessage());
            case RESET_REQUIRED -> LOG.warn("change-streamer: stream ended, replica must be re-synced: {}", describe(e));
            case CHANGE_LOG_GONE -> LOG.warn("change-streamer: stream ended, the change-log schema is gone (dropped or"
                    + " reset by another node): {}", describe(e));
            case FATAL -> LOG.error("change-streamer: stream ended: {}", describe(e));
            case RETRYABLE -> LOG.warn("change-streamer: stream ended, restarting from the last stored watermark: {}",
                    describe(e), e);
        }
    }

    static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    static Exception asException(Throwable t) {
        return t instanceof Exception e ? e : new IllegalStateException(t);
    }

    /** The current stream's source was unregistered; retryable once a replacement appears. */
    static final class SourceRemovedException extends Exception {
        private static final long serialVersionUID = 1L;

        SourceRemovedException() {
            super("change source removed; waiting for a replacement");
        }
    }

    /** The change source broke the stream's ordering contract; retrying would not help. */
    static final class UnrecoverableStreamException extends Exception {
        private static final long serialVersionUID = 1L;

        UnrecoverableStreamException(String message) {
            super(message);
        }
    }
}
