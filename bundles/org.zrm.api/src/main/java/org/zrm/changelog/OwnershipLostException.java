package org.zrm.changelog;

import java.util.Objects;

/**
 * Another replication manager has taken over the change log, so this node must stop writing and
 * purging (upstream: {@code "changeLog ownership has been assumed by <owner>"}). Not retryable.
 */
public class OwnershipLostException extends ChangeLogException {

    private static final long serialVersionUID = 1L;

    private final String newOwner;

    /**
     * @param message what was aborted
     * @param newOwner the task id that now owns the log, or {@code null} if unknown
     */
    public OwnershipLostException(String message, String newOwner) {
        super(Objects.requireNonNull(message, "message"));
        this.newOwner = newOwner;
    }

    /** @return the task id that now owns the log, or {@code null} if unknown */
    public String newOwner() {
        return newOwner;
    }
}
