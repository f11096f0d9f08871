package org.zrm.changesource.pg.internal.stream;

import java.util.Objects;
import java.util.function.LongConsumer;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.watermark.Watermarks;

/**
 * Decides which positions are confirmed to Postgres (upstream's {@code Acker}, spec §2.9).
 *
 * <p>A position is confirmed only when the consumer acked it, or when it comes from a status that
 * is not echoed (a keepalive without reply request, a lag report) while nothing the consumer has
 * yet to ack is outstanding. The latter keeps {@code confirmed_flush_lsn} moving over WAL that holds
 * no published changes, so the slot does not retain WAL forever. A {@code begin} (unless
 * {@code skipAck}) or an echoed status arms the wait; a consumer ack at or past it disarms it.
 *
 * <p>Thread-safe: {@link #onChange} runs on the stream's pump thread, {@link #ack} on the
 * consumer's ack thread.
 */
public final class Acker {

    private final LongConsumer send;
    private String waitingForDownstreamAck;

    /** @param send confirms an LSN upstream; must not block */
    public Acker(LongConsumer send) {
        this.send = Objects.requireNonNull(send, "send");
    }

    /** Observes a message as it is handed to the consumer (or withheld, for unechoed statuses). */
    public synchronized void onChange(ChangeStreamMessage message) {
        if (message instanceof ChangeStreamMessage.StatusMessage s) {
            if (Boolean.TRUE.equals(s.status().ack())) {
                waitingForDownstreamAck = s.watermark();
            } else if (waitingForDownstreamAck == null) {
                sendAck(s.watermark());
            }
        } else if (message instanceof ChangeStreamMessage.BeginMessage b && !b.begin().skipsAck()) {
            waitingForDownstreamAck = b.commitWatermark();
        }
    }

    /** The consumer durably stored everything up to {@code watermark}. */
    public synchronized void ack(String watermark) {
        if (waitingForDownstreamAck != null && waitingForDownstreamAck.compareTo(watermark) <= 0) {
            waitingForDownstreamAck = null;
        }
        sendAck(watermark);
    }

    private void sendAck(String watermark) {
        send.accept(Watermarks.toLsn(watermark).asLong());
    }
}
