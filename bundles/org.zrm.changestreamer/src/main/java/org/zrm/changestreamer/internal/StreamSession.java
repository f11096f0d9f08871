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
import org.zrm.changesource.ChangeStream;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
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
        Forwarder forwarder = parts.forwarder();
        ProtocolCodec codec = parts.codec();
        StreamerCounters counters = parts.counters();
        SubscriberRegistry registry = parts.registry();
        long unflushed = 0;
        // A reset requested before the supervisor published this stream could not close it.
        while (control.running() && !control.resetPending()) {
            ChangeStreamMessage msg = stream.take();
            if (msg instanceof StatusMessage st) {
                onStatus(storer, st);
                continue;
            }
            if (msg instanceof ControlMessage c) {
                onControl(c);
                continue;
            }
            ChangeStreamData data = (ChangeStreamData) msg;
            String watermark = sequencer.watermarkOf(data);
            String json = codec.encode(data);
            String tag = data instanceof DataMessage d ? d.change().tag() : data.type();
            WatermarkedChange entry = new WatermarkedChange(watermark, tag, json);
            Broadcast broadcast = null;
            streamLock.lock();
            try {
                // CS-1: the storer and the forwarder see the same stream position.
                storer.enqueue(data, json);
                unflushed += json.length();
                if (unflushed < flushBytesThreshold) {
                    forwarder.forward(entry);
                } else {
                    broadcast = forwarder.forwardWithFlowControl(entry);
                    unflushed = 0;
                }
                sequencer.accepted(data, watermark);
            } finally {
                streamLock.unlock();
            }
            registry.drainPending();
            if (data instanceof CommitMessage) {
                counters.transactionForwarded(watermark);
            } else if (data instanceof DataMessage) {
                counters.changeForwarded();
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
