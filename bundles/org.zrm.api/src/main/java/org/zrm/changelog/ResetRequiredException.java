package org.zrm.changelog;

/**
 * The change log cannot serve the local replica and the replica must be re-synced (the change-log
 * side of upstream's {@code AutoResetSignal}): the configuration differs from a replica that has
 * already moved past its initial sync, or a reset was requested by the replication stream and
 * auto-reset is enabled.
 */
public class ResetRequiredException extends ChangeLogException {

    private static final long serialVersionUID = 1L;

    /** @param message why, e.g. {@code "reset required by replication stream"} */
    public ResetRequiredException(String message) {
        super(message);
    }
}
