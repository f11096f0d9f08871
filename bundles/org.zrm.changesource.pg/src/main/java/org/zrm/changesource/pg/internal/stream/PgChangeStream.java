package org.zrm.changesource.pg.internal.stream;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.replication.ReplicationStream;
import org.zrm.changesource.pg.internal.replication.StreamHandler;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.Passthrough;
import org.zrm.watermark.Lsn;

/**
 * A {@link ChangeStream} over one Postgres replication stream: the message loop of upstream's
 * {@code PostgresChangeSource#startStream} (spec §2.8).
 *
 * <p>The replication pump thread parses each message, converts it ({@link ChangeMaker}), shows it
 * to the {@link Acker} and collects it in a batch, which it hands through the
 * {@link ChangeStreamMultiplexer} to a bounded {@link MessageBuffer}; the consumer takes from that
 * buffer. Keepalives become {@code status} messages: with a reply request they are forwarded (the
 * consumer's echo confirms the position), without one they only reach the Acker, which confirms
 * them itself when nothing is outstanding, and the multiplexer's listeners. Lag reports are
 * forwarded as statuses.
 *
 * <p><b>Sharing the stream with backfills.</b> The pump reserves the multiplexer for whole
 * transactions and yields it only between two of them: when the socket is drained, or when another
 * producer has waited longer than {@link #MAX_LOW_PRIORITY_DELAY} (so that a busy upstream cannot
 * starve a backfill). Reserving costs nothing while nobody else holds the stream; when a backfill
 * holds it, the pump keeps its batch, stops reading the socket and is woken by the grant. Its
 * messages never change threads on the way to the consumer.
 */
public final class PgChangeStream implements ChangeStream, StreamHandler {

    private static final Logger LOG = LoggerFactory.getLogger(PgChangeStream.class);
    /** Accounting cost of a status or control message, which has no wire payload of its own. */
    static final int STATUS_COST = 64;
    /**
     * How long a waiting backfill may be kept waiting by a busy replication stream before the pump
     * yields after its current transaction (upstream's {@code MAX_LOW_PRIORITY_DELAY_MS}).
     */
    static final Duration MAX_LOW_PRIORITY_DELAY = Duration.ofSeconds(1);
    private static final long MAX_LOW_PRIORITY_DELAY_NANOS = MAX_LOW_PRIORITY_DELAY.toNanos();

    private final String slot;
    private final ChangeMaker changeMaker;
    private final LagReporter lagReporter;
    private final MessageBuffer buffer;
    private final ChangeStreamMultiplexer multiplexer;
    private final Acker acker;
    private final UnaryOperator<ChangeSourceException> classifier;
    private volatile ReplicationStream stream;
    private volatile boolean closed;

    // Pump-thread batch: converted messages not yet handed to the buffer (see flush()).
    private final ArrayList<ChangeStreamMessage> pending = new ArrayList<>();
    private final IntArray pendingCosts = new IntArray();
    private long pendingBytes;
    // A batch never holds more than 1/16 of the buffer's bounds, so batching overshoots them by at
    // most that (plus the one message of the class description); tiny buffers get no batching.
    private final int batchMessages;
    private final long batchBytes;
    // Pump-thread reservation state: the reservation held, a request queued behind another
    // producer, the watermark to release with, and whether the pushed output is inside a transaction.
    private ChangeStreamMultiplexer.Reservation held;
    private ChangeStreamMultiplexer.Reservation requested;
    private String lastCommit;
    private boolean inTransaction;

    /**
     * @param slot the replication slot, for logs
     * @param afterWatermark the watermark the stream starts after (the multiplexer's first)
     * @param changeMaker converts pgoutput messages
     * @param lagReporter the source's lag reporter, or {@code null}
     * @param maxMessages buffer bound in messages
     * @param maxBytes buffer bound in bytes (replication message sizes)
     * @param classifier refines the failure that ended the stream (e.g. a terminated walsender whose
     *     slot turns out to be invalidated becomes an auto-reset); runs on the pump thread
     */
    public PgChangeStream(String slot, String afterWatermark, ChangeMaker changeMaker, LagReporter lagReporter,
            int maxMessages, long maxBytes, UnaryOperator<ChangeSourceException> classifier) {
        this.classifier = classifier == null ? UnaryOperator.identity() : classifier;
        this.slot = Objects.requireNonNull(slot, "slot");
        this.changeMaker = Objects.requireNonNull(changeMaker, "changeMaker");
        this.lagReporter = lagReporter;
        this.buffer = new MessageBuffer(maxMessages, maxBytes, this::wakePump);
        this.multiplexer = new ChangeStreamMultiplexer(afterWatermark, buffer);
        this.batchMessages = Math.max(1, maxMessages / 16);
        this.batchBytes = Math.max(1, maxBytes / 16);
        this.acker = new Acker(this::sendAck);
    }

    /**
     * @return the multiplexer through which other producers (the backfill manager) share this
     *     stream, and which shows every message to its listeners
     */
    public ChangeStreamMultiplexer multiplexer() {
        return multiplexer;
    }

    /** Attaches the running replication stream (after {@link ReplicationStream#start}). */
    public void attach(ReplicationStream replication) {
        this.stream = replication;
        if (closed) {
            replication.close();
        }
    }

    private void wakePump() {
        ReplicationStream s = stream;
        if (s != null) {
            s.wake();
        }
    }

    private void sendAck(long lsn) {
        ReplicationStream s = stream;
        if (s != null) {
            s.ack(lsn);
        }
    }

    // ------------------------------------------------------------------ StreamHandler (pump thread)

    @Override
    public boolean hasRoom() {
        if (requested != null) {
            if (!requested.granted()) {
                return false;
            }
            flush(false); // the grant woke us: hand over the batch that waited for it
            if (requested != null) {
                return false;
            }
        }
        return buffer.hasRoom();
    }

    @Override
    public void onMessage(long lsn, PgOutputMessage message, int wireBytes) {
        if (lagReporter != null) {
            if (message instanceof PgOutputMessage.Message m && lagReporter.isLagReport(m)) {
                try {
                    pushStatus(lagReporter.process(m));
                } catch (RuntimeException e) {
                    LOG.warn("ignoring malformed lag report at {} on slot {}: {}", Lsn.of(lsn), slot, e.toString());
                }
                return;
            }
            StatusMessage lag = lagReporter.checkCurrentLsn(lsn);
            if (lag != null) {
                pushStatus(lag);
            }
        }
        push(changeMaker.makeChanges(lsn, message), wireBytes);
    }

    @Override
    public void onUnparseable(long lsn, RuntimeException error) {
        push(changeMaker.fail(lsn, "an unparseable replication message", error), STATUS_COST);
    }

    @Override
    public void onKeepalive(long walEnd, boolean replyRequested) {
        pushStatus(new StatusMessage(new DownstreamStatus(replyRequested, null, Passthrough.NONE),
                Lsn.of(walEnd).toWatermark()));
    }

    /**
     * Hands the batch collected since the last call to the buffer under one lock: one consumer
     * wake-up per batch instead of one per message. The pump calls this whenever the socket has
     * nothing pending and at least every {@link ReplicationStream#FLUSH_EVERY} messages, so a batch
     * holds at most that many replication messages' output and adds no waiting.
     */
    @Override
    public void flush() {
        flush(false);
    }

    @Override
    public void flush(boolean drained) {
        if (requested != null) {
            if (!requested.granted()) {
                return; // still queued behind another producer; the grant wakes the pump
            }
            held = requested;
            requested = null;
            lastCommit = held.watermark();
        }
        int n = pending.size();
        int from = 0;
        while (from < n) {
            if (held == null) {
                if (statusesOnly(from, n)) {
                    multiplexer.pushAll(null, pending, pendingCosts, from, n);
                    from = n;
                    break;
                }
                ChangeStreamMultiplexer.Reservation r = multiplexer.tryReserve(ChangeStreamMultiplexer.REPLICATION,
                        this::wakePump);
                if (!r.granted()) {
                    requested = r;
                    break;
                }
                held = r;
                lastCommit = r.watermark();
            }
            // A backfill that has waited too long gets the stream after the next commit, even
            // though more replication messages are at hand.
            boolean starving = multiplexer.hasWaiters()
                    && multiplexer.waiterDelayNanos() > MAX_LOW_PRIORITY_DELAY_NANOS;
            int to = from;
            boolean endedTransaction = false;
            while (to < n) {
                ChangeStreamMessage m = pending.get(to++);
                if (m instanceof ChangeStreamMessage.BeginMessage) {
                    inTransaction = true;
                } else if (m instanceof ChangeStreamMessage.CommitMessage c) {
                    inTransaction = false;
                    lastCommit = c.watermark();
                    endedTransaction = true;
                } else if (m instanceof ChangeStreamMessage.RollbackMessage) {
                    inTransaction = false;
                    endedTransaction = true;
                }
                if (starving && endedTransaction) {
                    break;
                }
            }
            multiplexer.pushAll(held, pending, pendingCosts, from, to);
            from = to;
            if (!inTransaction && (starving && endedTransaction || from == n && drained)) {
                multiplexer.release(held, lastCommit);
                held = null;
            }
        }
        if (held != null && !inTransaction && from == n && drained) {
            // An empty flush of a drained socket after a batch that ended between transactions.
            multiplexer.release(held, lastCommit);
            held = null;
        }
        if (from == n) {
            pending.clear();
            pendingCosts.clear();
            pendingBytes = 0;
        } else if (from > 0) {
            for (int i = 0; i < from; i++) {
                pendingBytes -= pendingCosts.get(i);
            }
            pending.subList(0, from).clear();
            pendingCosts.removeFirst(from);
        }
    }

    private boolean statusesOnly(int from, int to) {
        for (int i = from; i < to; i++) {
            if (!(pending.get(i) instanceof StatusMessage)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void onEnd(ChangeSourceException end) {
        flush();
        ChangeSourceException failure = end;
        if (!(end instanceof ChangeStreamClosedException) && !closed) {
            try {
                failure = classifier.apply(end);
            } catch (RuntimeException e) {
                LOG.warn("cannot classify the failure of slot {}: {}", slot, e.toString());
            }
        }
        if (!(failure instanceof ChangeStreamClosedException) && !closed) {
            LOG.warn("change stream on slot {} failed: {}", slot, failure.getMessage());
        }
        buffer.finish(failure, failure instanceof ChangeStreamClosedException && !closed);
        multiplexer.fail(failure);
    }

    private void push(List<ChangeStreamMessage> messages, int wireBytes) {
        int n = messages.size();
        for (int i = 0; i < n; i++) {
            ChangeStreamMessage m = messages.get(i);
            acker.onChange(m);
            pend(m, i == 0 ? Math.max(wireBytes, 1) : STATUS_COST);
        }
    }

    private void pend(ChangeStreamMessage m, int cost) {
        pending.add(m);
        pendingCosts.add(cost);
        pendingBytes += cost;
        if (requested == null && (pending.size() >= batchMessages || pendingBytes >= batchBytes)) {
            flush(false);
        }
    }

    private void pushStatus(StatusMessage status) {
        acker.onChange(status);
        // Unechoed keepalives go to the multiplexer's listeners (the backfill manager follows the
        // stream position with them) but not to the consumer; the multiplexer filters them.
        pend(status, STATUS_COST);
    }

    // ------------------------------------------------------------------ ChangeStream (consumer)

    @Override
    public ChangeStreamMessage take() throws ChangeSourceException, InterruptedException {
        return buffer.poll(null);
    }

    @Override
    public ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException, InterruptedException {
        return buffer.poll(Objects.requireNonNull(timeout, "timeout"));
    }

    @Override
    public void ack(ChangeSourceUpstream ack) {
        if (closed || ack == null) {
            return;
        }
        try {
            acker.ack(ack.watermark());
        } catch (RuntimeException e) {
            LOG.warn("ignoring ack with invalid watermark {} on slot {}: {}", ack.watermark(), slot, e.toString());
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            ChangeStreamClosedException reason = new ChangeStreamClosedException("change stream on slot " + slot
                    + " was closed");
            buffer.finish(reason, false);
            multiplexer.fail(reason);
            ReplicationStream s = stream;
            if (s != null) {
                s.close();
            }
        }
    }

    /** @return the replication connection's pump, {@code null} before {@link #attach} */
    public ReplicationStream replication() {
        return stream;
    }

    /** @return the slot this stream reads */
    public String slot() {
        return slot;
    }

    /** @return the number of messages waiting for the consumer (for tests and diagnostics) */
    public int buffered() {
        return buffer.size();
    }
}
