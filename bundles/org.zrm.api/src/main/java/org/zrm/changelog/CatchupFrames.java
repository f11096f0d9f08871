package org.zrm.changelog;

import java.util.Objects;

/**
 * Converts between the text of a forwarded change-stream message and the {@code change} text a
 * change-log row stores, so that a message rebuilt for catch-up is byte-identical to the message
 * that was forwarded live (Zero's {@code extractChangeSubstring} and {@code toDownstream}).
 *
 * <p>Live messages are encoded once (with the protocol JSON codec); the log
 * keeps only the inner change object, cut out of that text, and catch-up glues the same envelope
 * back around it. Neither direction parses or re-serialises JSON. Both rely on the envelope's
 * trailing object (the watermark) containing no comma, which holds for watermarks.
 */
public final class CatchupFrames {

    private CatchupFrames() {
    }

    /**
     * Cuts the inner change object out of a forwarded message: for {@code begin}/{@code commit}
     * the text between the first and the last comma, otherwise between the first comma and the
     * last {@code ]}.
     *
     * @param messageJson the encoded message, e.g.
     *     {@code ["begin",{"tag":"begin"},{"commitWatermark":"0a"}]}
     * @param tag the change's tag
     * @return the change text to store, e.g. {@code {"tag":"begin"}}
     * @throws IllegalArgumentException if the text does not have the message envelope's shape
     */
    public static String extractChange(String messageJson, String tag) {
        Objects.requireNonNull(messageJson, "messageJson");
        Objects.requireNonNull(tag, "tag");
        int start = messageJson.indexOf(',') + 1;
        int end = switch (tag) {
            case "begin", "commit" -> messageJson.lastIndexOf(',');
            default -> messageJson.lastIndexOf(']');
        };
        if (start <= 0 || end < start) {
            throw new IllegalArgumentException("not a change-stream message envelope for tag " + tag);
        }
        return messageJson.substring(start, end);
    }

    /**
     * Rebuilds the downstream message text of a stored row:
     * {@code ["begin",<change>,{"commitWatermark":"<W>"}]},
     * {@code ["commit",<change>,{"watermark":"<W>"}]}, {@code ["rollback",<change>]}, and
     * {@code ["data",<change>]} for every other tag.
     *
     * @param entry the stored row
     * @return the message text, equal to the forwarded text of the same message
     */
    public static String rebuild(ChangeLogEntry entry) {
        String change = entry.change();
        String watermark = entry.watermark();
        return switch (entry.tag()) {
            case "begin" -> "[\"begin\"," + change + ",{\"commitWatermark\":\"" + watermark + "\"}]";
            case "commit" -> "[\"commit\"," + change + ",{\"watermark\":\"" + watermark + "\"}]";
            case "rollback" -> "[\"rollback\"," + change + "]";
            default -> "[\"data\"," + change + "]";
        };
    }
}
