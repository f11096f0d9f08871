package org.zrm.operator;

/**
 * What the change streamer's next purge cycle would do now.
 *
 * @param bound the watermark it would purge below (the oldest backed-up watermark waiting), or
 *     {@code null} if none is waiting
 * @param blockedBy why it would not purge (no backed-up watermark, an open snapshot reservation,
 *     no subscriber, a subscriber behind the bound), or {@code null} if it would
 * @param rows the rows it would delete: 0 when blocked
 * @param earliestAck the smallest watermark acknowledged by a connected subscriber, {@code null} if none
 */
public record PurgePreview(String bound, String blockedBy, long rows, String earliestAck) {
}
