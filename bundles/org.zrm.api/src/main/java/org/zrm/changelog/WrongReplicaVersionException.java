package org.zrm.changelog;

import java.util.Objects;
import org.zrm.protocol.subscriber.ErrorType;

/**
 * A subscriber's replica belongs to a different lineage than the change log. Subscribers are sent
 * error type 1 ({@code WrongReplicaVersion}) with {@link #getMessage()} and must re-restore.
 */
public class WrongReplicaVersionException extends ChangeLogException {

    private static final long serialVersionUID = 1L;

    private final String current;
    private final String requested;

    /**
     * @param current the replica version served here
     * @param requested the subscriber's replica version
     */
    public WrongReplicaVersionException(String current, String requested) {
        super("current replica version is " + Objects.requireNonNull(current, "current")
                + " (requested " + Objects.requireNonNull(requested, "requested") + ")");
        this.current = current;
        this.requested = requested;
    }

    /** @return the replica version served here */
    public String current() {
        return current;
    }

    /** @return the subscriber's replica version */
    public String requested() {
        return requested;
    }

    /** @return the subscriber error type this failure is reported with, {@link ErrorType#WRONG_REPLICA_VERSION} */
    public ErrorType errorType() {
        return ErrorType.WRONG_REPLICA_VERSION;
    }
}
