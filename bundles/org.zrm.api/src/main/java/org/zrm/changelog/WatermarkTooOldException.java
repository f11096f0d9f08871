package org.zrm.changelog;

import java.util.Objects;
import org.zrm.protocol.subscriber.ErrorType;

/**
 * The changes a subscriber needs have been purged: its watermark is older than the earliest one
 * in the log. A serving subscriber is sent error type 2 ({@code WatermarkTooOld}) with
 * {@link #getMessage()}; a backup-mode subscriber triggers a reset instead.
 */
public class WatermarkTooOldException extends ChangeLogException {

    private static final long serialVersionUID = 1L;

    private final String earliest;
    private final String requested;

    /**
     * @param earliest the earliest watermark still in the log
     * @param requested the subscriber's watermark
     */
    public WatermarkTooOldException(String earliest, String requested) {
        super("earliest supported watermark is " + Objects.requireNonNull(earliest, "earliest")
                + " (requested " + Objects.requireNonNull(requested, "requested") + ")");
        this.earliest = earliest;
        this.requested = requested;
    }

    /** @return the earliest watermark still in the log */
    public String earliest() {
        return earliest;
    }

    /** @return the subscriber's watermark */
    public String requested() {
        return requested;
    }

    /** @return the subscriber error type this failure is reported with, {@link ErrorType#WATERMARK_TOO_OLD} */
    public ErrorType errorType() {
        return ErrorType.WATERMARK_TOO_OLD;
    }
}
