package org.zrm.changestreamer.internal;

import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.status.MetricsSink;

/**
 * Makes a terminal stop of the change streamer loud (upstream ends its process there, and an
 * orchestrator restarts it): the runtime turns unhealthy with the reason, {@code /metrics} shows
 * it, and with {@code exitOnTerminalStop} the runtime is stopped through the framework
 * ({@link FrameworkStop}), so the launcher exits non-zero printing the reason. Without it the node
 * stays up, stopped and unhealthy, for an operator to inspect.
 *
 * <p>Terminal: ownership of the change log taken by another node, the replication slot missing
 * (another replication manager took over the upstream), a required re-sync with auto-reset off,
 * the change log dropped or reset by another node, a backup reported wedged, or any other failure
 * that retrying cannot fix. An orderly stop (deactivation, a framework shutdown) is not.
 *
 * <p>A wedged backup is stopped by the backup coordinator, which decides about exiting by its own
 * {@code exitOnFatal}; this class then only records the stop.
 */
final class TerminalStop {

    /** Classes of terminal stops, also the {@code reason} label of the metric. */
    enum Kind { OWNERSHIP_LOST, SLOT_MISSING, REPLICATION_TAKEN_OVER, RESET_REQUIRED, CHANGE_LOG_GONE, BACKUP_FATAL,
        UNRECOVERABLE }

    private static final Logger LOG = LoggerFactory.getLogger(TerminalStop.class);

    private final boolean exitOnTerminalStop;
    private final Consumer<String> stopRuntime;
    private final BooleanSupplier backupFatal;
    private final Clock clock;
    private volatile Kind kind;
    private volatile String reason;
    private volatile Instant at;
    private volatile boolean orderly;

    /**
     * @param exitOnTerminalStop whether to stop the runtime
     * @param stopRuntime stops the runtime with a one-line reason ({@link FrameworkStop})
     * @param backupFatal whether the backup coordinator has reported a fatal backup condition
     */
    TerminalStop(boolean exitOnTerminalStop, Consumer<String> stopRuntime, BooleanSupplier backupFatal, Clock clock) {
        this.exitOnTerminalStop = exitOnTerminalStop;
        this.stopRuntime = stopRuntime;
        this.backupFatal = backupFatal;
        this.clock = clock;
    }

    /** The component is being deactivated: a stop from now on is orderly, whatever its cause. */
    void orderlyStop() {
        orderly = true;
    }

    /**
     * Called once the stream loop has ended.
     *
     * @param cause why, {@code null} for an orderly stop
     */
    void streamerTerminated(Throwable cause) {
        if (cause == null || orderly || kind != null) {
            return;
        }
        Kind k = backupFatal.getAsBoolean() ? Kind.BACKUP_FATAL : kindOf(cause);
        String text = describe(k, cause);
        kind = k;
        reason = text;
        at = clock.instant();
        LOG.error("change-streamer: !!! terminal stop: {} !!!", text);
        if (k == Kind.BACKUP_FATAL) {
            LOG.error("change-streamer: the backup coordinator decides about exiting (exitOnFatal)");
        } else if (exitOnTerminalStop) {
            stopRuntime.accept("change streamer stopped: " + text);
        } else {
            LOG.error("change-streamer: exitOnTerminalStop is off: the node stays up, stopped and unhealthy, until"
                    + " restarted");
        }
    }

    static Kind kindOf(Throwable cause) {
        if (cause instanceof OwnershipLostException) {
            return Kind.OWNERSHIP_LOST;
        }
        if (cause instanceof ChangeSourceAbortedException && cause.getMessage() != null
                && cause.getMessage().contains("replication slot") && cause.getMessage().contains("missing")) {
            return Kind.SLOT_MISSING;
        }
        if (cause instanceof ChangeSourceAbortedException && cause.getMessage() != null
                && cause.getMessage().contains("taking over")) {
            // Postgres ended the walsender: another replication manager took the stream over, or
            // someone terminated it (as before dropping the slot by hand).
            return Kind.REPLICATION_TAKEN_OVER;
        }
        if (StreamFailure.requiresReset(cause)) {
            return Kind.RESET_REQUIRED;
        }
        if (StreamFailure.isMissingChangeLog(cause)) {
            return Kind.CHANGE_LOG_GONE;
        }
        return Kind.UNRECOVERABLE;
    }

    private static String describe(Kind k, Throwable cause) {
        String m = StreamFailure.describe(cause);
        return switch (k) {
            case OWNERSHIP_LOST -> "ownership of the change log was taken by another replication manager (" + m + ")";
            case SLOT_MISSING -> "the replication slot is missing (" + m + ")";
            case REPLICATION_TAKEN_OVER -> "Postgres ended the replication stream: another replication manager took it"
                    + " over, or its walsender was terminated (" + m + ")";
            case RESET_REQUIRED -> "the replica must be re-synced and autoReset is off (" + m + ")";
            case CHANGE_LOG_GONE -> "the change log was dropped or reset by another node (" + m + ")";
            case BACKUP_FATAL -> "a fatal backup condition (" + m + ")";
            case UNRECOVERABLE -> "an unrecoverable error (" + m + ")";
        };
    }

    boolean healthy() {
        return kind == null;
    }

    String reason() {
        return reason;
    }

    /** The {@code terminalStop} entry of the status section, {@code null} while running. */
    Map<String, Object> status() {
        Kind k = kind;
        if (k == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", k.name());
        m.put("reason", reason);
        m.put("at", at.toString());
        m.put("exitOnTerminalStop", exitOnTerminalStop);
        return m;
    }

    void collect(MetricsSink sink) {
        Kind k = kind;
        sink.gauge("zrm_changestreamer_healthy", "0 after a terminal stop of the change streamer", Map.of(),
                k == null ? 1 : 0);
        for (Kind each : Kind.values()) {
            sink.gauge("zrm_changestreamer_terminal_stop", "1 for the reason the change streamer stopped for good",
                    Map.of("reason", each.name().toLowerCase(java.util.Locale.ROOT)), each == k ? 1 : 0);
        }
    }
}
