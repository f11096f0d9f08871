package org.zrm.changestreamer.internal;

import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changelog.StorerListener;
import org.zrm.changestreamer.internal.StreamFailure.UnrecoverableStreamException;
import org.zrm.changesource.ChangeStream;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.ControlMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Rollback;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.StreamerStatus;

/**
 * One upstream stream, from the storer's start to the storer's stop: the path of every change
 * through the streamer (spec §1.3 step 5).
 *
 * <p>For each message: the {@link TransactionSequencer} checks its place and gives its commit
 * watermark; it is encoded once; then, in one critical section under the
 * {@linkplain SubscriberRegistry#streamLock() stream lock} (CS-1), it is enqueued to the storer and
 * forwarded to the caught-up subscribers, so both see the same stream position. After about every
 * {@code flushBytesThreshold} characters the forward is tracked, and once the flow-control window
 * is full the session waits for the oldest tracked one. The storer's {@link StorerListener} acks
 * durable transactions upstream.
 *
 * <p>{@link #run()} returns why the stream ended. On the way out an open transaction is rolled
 * back exactly once (a synthesized {@code rollback} to subscribers and {@link Storer#abort()}),
 * and the storer is stopped after it has drained.
 */
final class StreamSession {

    private static final Logger LOG = LoggerFactory.getLogger(StreamSession.class);
    private static final Duration STORER_DRAIN_TIMEOUT = Duration.ofSeconds(30);

    /** What the session needs to know of its supervisor; read per message, so volatile reads only. */
    interface Control {
        /** @return whether the streamer still runs; a stop ends the session without an error */
        boolean running();

        /** @return whether a re-sync was requested; the session ends so the supervisor can run it */
        boolean resetPending();

        /** @return whether the stream's change source was unregistered */
        boolean sourceGone();

        /** The storer runs and subscribers are being registered: the stream is live. */
        void streaming();
    }

    /**
     * The streamer's long-lived parts a session works with.
     *
     * @param settings settings (task id, flush threshold, flow-control window, auto-reset)
     * @param storers starts this session's storer
     * @param catchup serves the storer's catch-up snapshots
     * @param changeLog marked reset-required on a {@code reset-required} control message
     * @param registry subscribers and the stream lock
     * @param forwarder fans changes out to the registered subscribers
     * @param codec encodes each message once for the storer and all subscribers
     * @param counters transactions, changes, flow-control waits, stored and acked watermarks
     */
    record Parts(StreamerSettings settings, StorerFactory storers, CatchupHandler catchup, ChangeLog changeLog,
            SubscriberRegistry registry, Forwarder forwarder, ProtocolCodec codec, StreamerCounters counters) {
    }

    private final Parts parts;
    private final ChangeStream stream;
    private final Control control;
    private final TransactionSequencer sequencer;
    private final ReentrantLock streamLock;
    private final int flushBytesThreshold;
    private final int flowControlWindow;
    /**
     * The run being stored and forwarded ({@link #pump}): the messages and their encoded entries.
     * The stream loop's thread only.
     */
    private final ChangeStreamData[] run = new ChangeStreamData[Forwarder.MAX_RUN];
    private final WatermarkedChange[] runEntries = new WatermarkedChange[Forwarder.MAX_RUN];
    /** Characters forwarded since the last tracked (flow-controlled) forward. */
    private long unflushed;
    /** Set by the storer's thread when it failed; it then closes the stream to wake {@link #run()}. */
    private volatile ChangeLogException storerFailure;

    /**
     * @param stream the open stream, owned by this session from now on (closed when it ends)
     * @param resumeWatermark the watermark the stream starts after
     */
    StreamSession(Parts parts, ChangeStream stream, String resumeWatermark, Control control) {
        this.parts = parts;
        this.stream = stream;
        this.control = control;
        this.sequencer = new TransactionSequencer(resumeWatermark);
        this.streamLock = parts.registry().streamLock();
        this.flushBytesThreshold = parts.settings().flushBytesThreshold();
        this.flowControlWindow = parts.settings().effectiveFlowControlWindow();
    }

    /**
     * Runs the stream until it fails, the streamer stops or a re-sync is requested.
     *
     * @return why the stream ended, or {@code null} if it ended because the streamer stops
     */
    Throwable run() {
        Storer storer = null;
        Throwable error = null;
        try {
            storer = parts.storers().start(parts.settings().taskID(), new Listener(), parts.catchup());
            parts.registry().attach(storer);
            control.streaming();
            pump(storer);
        } catch (Exception e) {
            error = StreamFailure.endCause(e, storerFailure, control.running(), control.sourceGone());
        } finally {
            stream.close();
            end(storer);
        }
        return error;
    }

    private void pump(Storer storer) throws Exception {
        ChangeStreamMessage next = null; // read ahead while gathering a run, handled next
        Exception deferred = null;        // a pull that failed while gathering, thrown next
        // A reset requested before the supervisor published this stream could not close it.
        while (control.running() && !control.resetPending()) {
            if (deferred != null) {
                throw deferred;
            }
            ChangeStreamMessage msg = next != null ? next : stream.take();
            next = null;
            if (msg instanceof StatusMessage st) {
                onStatus(storer, st);
                continue;
            }
            if (msg instanceof ControlMessage c) {
                onControl(c);
                continue;
            }
            // Gather a run of what is already waiting, without waiting for more, so that each
            // subscriber takes the run under one lock rather than one per change.
            ChangeStreamData data = (ChangeStreamData) msg;
            run[0] = data;
            runEntries[0] = entry(data);
            int n = 1;
            long runChars = runEntries[0].jsonLength();
            while (n < run.length && !endsRun(data, runEntries[n - 1], unflushed + runChars)) {
                ChangeStreamMessage more;
                try {
                    more = stream.poll(Duration.ZERO);
                } catch (Exception e) {
                    deferred = e; // after the run gathered so far is stored and forwarded
                    break;
                }
                if (more == null) {
                    break;
                }
                WatermarkedChange entry = more instanceof ChangeStreamData d && !(d instanceof BeginMessage)
                        ? entryOrNull(d) : null;
                if (entry == null) {
                    next = more; // not a change of this transaction, or a bad one: handled on its own
                    break;
                }
                data = (ChangeStreamData) more;
                run[n] = data;
                runEntries[n++] = entry;
                runChars += entry.jsonLength();
            }
            forwardRun(storer, n);
        }
    }

    /**
     * Whether a run ends after {@code data}. A run holds at most one transaction boundary, at its
     * end: a {@code begin} ends it, because the sequencer checks the transaction's changes only
     * once the {@code begin} is accepted; a {@code commit} or {@code rollback} ends it, because
     * subscribers queued during the transaction join after it. And the change that reaches the
     * flush threshold ends it, because that one is forwarded with flow control.
     */
    private boolean endsRun(ChangeStreamData data, WatermarkedChange entry, long unflushedChars) {
        return data instanceof BeginMessage || entry.endsTransaction() || unflushedChars >= flushBytesThreshold;
    }

    /**
     * Stores and forwards {@code run[0..n)} in one critical section, then waits for flow control if
     * the run reached the flush threshold.
     */
    private void forwardRun(Storer storer, int n) throws Exception {
        Forwarder forwarder = parts.forwarder();
        Broadcast broadcast = null;
        int stored = 0;
        long chars = 0;
        streamLock.lock();
        try {
            // CS-1: the storer and the forwarder see the same stream position.
            while (stored < n) {
                String json = runEntries[stored].json();
                storer.enqueue(run[stored], json);
                sequencer.accepted(run[stored], runEntries[stored].watermark());
                chars += json.length();
                stored++;
            }
        } finally {
            // What was stored is forwarded, also when the storer failed part-way through the run.
            if (stored == n && unflushed + chars >= flushBytesThreshold) {
                forwarder.forward(runEntries, n - 1);
                broadcast = forwarder.forwardWithFlowControl(runEntries[n - 1]);
                unflushed = 0;
            } else {
                forwarder.forward(runEntries, stored);
                unflushed += chars;
            }
            streamLock.unlock();
        }
        parts.registry().drainPending();
        StreamerCounters counters = parts.counters();
        for (int i = 0; i < n; i++) {
            if (run[i] instanceof CommitMessage) {
                counters.transactionForwarded(runEntries[i].watermark());
            } else if (run[i] instanceof DataMessage) {
                counters.changeForwarded();
            }
            run[i] = null;
            runEntries[i] = null;
        }
        if (broadcast != null) {
            // Wait for the oldest flush once the window is full, not for this one: the round
            // trip to the subscribers then overlaps forwarding instead of pausing it at every
            // flush (upstream waits for each, a window of 1).
            long waited = forwarder.awaitWindow(flowControlWindow);
            if (waited > 0) {
                counters.flowControlWaited(waited);
            }
        }
    }

    /** Checks {@code data}'s place in the stream and encodes it once, for the storer and all subscribers. */
    private WatermarkedChange entry(ChangeStreamData data) throws UnrecoverableStreamException {
        String watermark = sequencer.watermarkOf(data);
        String tag = data instanceof DataMessage d ? d.change().tag() : data.type();
        return new WatermarkedChange(watermark, tag, parts.codec().encode(data));
    }

    /**
     * {@link #entry} of a change read ahead, or {@code null} if the sequencer refuses it (or it
     * cannot be encoded): the run before it is stored and forwarded first, and then the change is
     * checked again on its own and fails the stream, as it would have without the run.
     */
    private WatermarkedChange entryOrNull(ChangeStreamData data) {
        try {
            return entry(data);
        } catch (UnrecoverableStreamException | RuntimeException refused) {
            return null;
        }
    }

    private void onStatus(Storer storer, StatusMessage st) throws ChangeLogException, InterruptedException {
        if (st.status().ackRequested()) {
            storer.enqueue(st, null);
        }
        if (st.status().lagReport() != null) {
            parts.counters().lagReportReceived(st.status().lagReport());
            parts.registry().publishStatus(parts.codec().encode(new Downstream.StatusMessage(
                    new StreamerStatus(st.status().lagReport(), Passthrough.NONE))));
        }
    }

    private void onControl(ControlMessage c) throws ChangeLogException {
        String message = c.control().message() == null ? "Resync required" : c.control().message();
        LOG.error("change-streamer: replication stream requires a reset: {}", message);
        parts.changeLog().markResetRequired();
        if (parts.settings().autoReset()) {
            // Ends this stream (open transaction rolled back); the supervisor re-syncs in process.
            throw new ResetRequiredException("reset required by replication stream: " + message);
        }
        LOG.error("change-streamer: !!! reset required ({}) but autoReset is disabled; the change log is marked"
                + " reset-required and streaming continues. Re-sync the replica manually !!!", message);
    }

    /** Rolls back an interrupted transaction (once), detaches the storer, then stops it. */
    private void end(Storer storer) {
        String openTx = sequencer.openTransaction();
        streamLock.lock();
        try {
            if (openTx != null) {
                LOG.info("change-streamer: aborting interrupted transaction {}", openTx);
                if (storer != null) {
                    try {
                        storer.abort();
                    } catch (ChangeLogException e) {
                        LOG.debug("change-streamer: storer already ended; transaction {} was not stored", openTx);
                    }
                }
                parts.forwarder().forward(new WatermarkedChange(openTx, "rollback",
                        parts.codec().encode(new RollbackMessage(new Rollback()))));
            }
            parts.registry().detachStorerLocked();
        } finally {
            streamLock.unlock();
        }
        if (storer != null) {
            storer.stop();
            try {
                if (!storer.awaitTermination(STORER_DRAIN_TIMEOUT)) {
                    storer.close();
                }
            } catch (InterruptedException e) {
                storer.close();
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Receives durable transactions and status echoes from the storer and acks them upstream. */
    private final class Listener implements StorerListener {

        @Override
        public void stored(String commitWatermark, ChangeSourceUpstream ack) {
            parts.counters().stored(commitWatermark);
            if (ack != null) {
                stream.ack(ack);
                parts.counters().acked(ack.watermark());
            }
        }

        @Override
        public void statusAcked(ChangeSourceUpstream echo) {
            stream.ack(echo);
            parts.counters().acked(echo.watermark());
        }

        @Override
        public void failed(ChangeLogException cause) {
            storerFailure = cause;
            stream.close(); // wakes the session, which ends with the storer's failure
        }
    }
}
