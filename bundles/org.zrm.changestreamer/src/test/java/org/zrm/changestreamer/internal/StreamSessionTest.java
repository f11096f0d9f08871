package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changestreamer.internal.Msgs.begin;
import static org.zrm.changestreamer.internal.Msgs.insert;
import static org.zrm.changestreamer.internal.Msgs.rollback;
import static org.zrm.changestreamer.internal.Msgs.status;
import static org.zrm.changestreamer.internal.Msgs.tx;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.SubscriptionMessage;
import org.zrm.changestreamer.internal.StreamFailure.SourceRemovedException;
import org.zrm.changestreamer.internal.StreamFailure.UnrecoverableStreamException;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Timings;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * One stream session on the test's thread: the messages and the way the stream ends are queued in
 * the fake stream before {@link StreamSession#run()} is called, which returns why it ended.
 */
@Timeout(30)
class StreamSessionTest {

    private static final String STATUS = "[\"status\",{\"tag\":\"status\"}]";
    private static final String ROLLBACK = "[\"rollback\",{\"tag\":\"rollback\"}]";

    private final MemoryChangeLog log = new MemoryChangeLog();
    private final Forwarder forwarder = new Forwarder(System::currentTimeMillis);
    private final StreamerCounters counters = new StreamerCounters();
    private final ProtocolCodec codec = new ProtocolCodec();
    private final SubscriberRegistry registry = new SubscriberRegistry(forwarder, counters, codec, 1 << 20, 16, STATUS);
    private final FakeChangeSource source = new FakeChangeSource("01");
    private final Control control = new Control();

    static final class Control implements StreamSession.Control {
        volatile boolean running = true;
        volatile boolean resetPending;
        volatile boolean sourceGone;
        volatile int streaming;
        /** If positive, running() turns false after this many calls: a stop during the session. */
        volatile int runningChecksLeft;

        @Override
        public boolean running() {
            if (runningChecksLeft > 0 && --runningChecksLeft == 0) {
                running = false;
            }
            return running;
        }

        @Override
        public boolean resetPending() {
            return resetPending;
        }

        @Override
        public boolean sourceGone() {
            return sourceGone;
        }

        @Override
        public void streaming() {
            streaming++;
        }
    }

    StreamSessionTest() throws Exception {
        registry.replicaVersion("01");
        log.ensureReplicationConfig(source.state, true);
    }

    /** Queues {@code msgs} and then {@code end} into a fresh stream and runs a session over it. */
    private Throwable run(Exception end, ChangeStreamMessage... msgs) throws Exception {
        FakeChangeSource.FakeStream stream = (FakeChangeSource.FakeStream) source.startStream("01", List.of());
        for (ChangeStreamMessage m : msgs) {
            stream.items.add(m);
        }
        stream.items.add(end);
        StreamSession.Parts parts = new StreamSession.Parts(ChangeStreamerServicePgTest.DEFAULTS, log,
                (snapshot, requests) -> { }, log, registry, forwarder, codec, counters);
        Throwable why = new StreamSession(parts, stream, "01", control).run();
        assertTrue(stream.closed, "the session closes its stream");
        assertNull(registry.storer(), "the storer is detached when the stream ends");
        return why;
    }

    private Subscription subscribe(String id) {
        return registry.subscribe(new SubscriberContext(ChangeStreamer.PROTOCOL_VERSION, id, null,
                ReplicatorMode.SERVING, "01", "01", false), new SubscriberRegistryTest.Gate());
    }

    /** Everything the subscription holds now, consumed. */
    private static List<String> received(Subscription s) {
        List<String> out = new ArrayList<>();
        SubscriptionMessage m;
        while ((m = s.poll()) != null) {
            out.add(m.json());
            m.consumed();
        }
        return out;
    }

    private static List<String> tags(List<String> msgs) {
        return msgs.stream().map(ChangeStreamerServicePgTest::tag).toList();
    }

    private List<String> acks() {
        List<String> out = new ArrayList<>();
        for (ChangeSourceUpstream a : source.acks) {
            out.add(a.watermark());
        }
        return out;
    }

    @Test
    void storesForwardsAndAcksEveryTransactionAndReturnsWhyTheStreamEnded() throws Exception {
        Subscription sub = subscribe("s");
        ChangeSourceException gone = new ChangeSourceException("connection reset");
        List<ChangeStreamMessage> msgs = new ArrayList<>(List.of(tx("03", "a", "b")));
        msgs.add(status("04", true));
        msgs.addAll(List.of(tx("05", "c")));

        assertSame(gone, run(gone, msgs.toArray(ChangeStreamMessage[]::new)));
        assertEquals(1, control.streaming);
        assertEquals(List.of("status", "begin", "insert", "insert", "commit", "begin", "insert", "commit"),
                tags(received(sub)), "a subscriber registered when the storer started gets the live stream");
        assertEquals(List.of("01,begin", "01,commit", "03,begin", "03,insert", "03,insert", "03,commit", "05,begin",
                "05,insert", "05,commit"), log.rows());
        assertEquals(List.of("03", "04", "05"), acks(), "durable commits and the status echo are acked upstream");
        assertEquals(2, counters.transactions());
        assertEquals(3, counters.changes());
        assertEquals("05", counters.lastStoredWatermark());
        assertEquals("05", counters.lastAckedWatermark());
        MemoryChangeLog.MemoryStorer storer = log.storers.poll();
        assertTrue(storer.stopped);
        assertFalse(storer.aborted, "no transaction was open");
    }

    /**
     * Everything is queued before the session starts, so the session gathers runs of what is
     * waiting: a transaction longer than a run, a status between transactions, and the stream's end
     * read while a run is gathered. Stored, forwarded and counted as one message at a time.
     */
    @Test
    void changesAlreadyWaitingAreForwardedInRunsInStreamOrder() throws Exception {
        Subscription sub = subscribe("s");
        Object[] ids = new Object[3 * Forwarder.MAX_RUN + 5];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = "r" + i;
        }
        List<ChangeStreamMessage> msgs = new ArrayList<>(List.of(tx("03", ids)));
        msgs.add(status("04", true));
        msgs.addAll(List.of(tx("05", "x", "y")));
        msgs.add(begin("07"));
        msgs.add(insert("z"));
        ChangeStreamClosedException end = new ChangeStreamClosedException("connection closed");

        assertSame(end, run(end, msgs.toArray(ChangeStreamMessage[]::new)));
        List<String> got = received(sub);
        List<String> expected = new ArrayList<>(List.of(STATUS));
        for (ChangeStreamMessage m : msgs) {
            if (!(m instanceof ChangeStreamMessage.StatusMessage)) {
                expected.add(Msgs.json(m));
            }
        }
        expected.add(ROLLBACK);
        assertEquals(expected, got);
        assertEquals(2 + ids.length + 2 + 2 + 2, log.rows().size(), "the bootstrap, 03 and 05 are stored; 07 is not");
        assertEquals("05,commit", log.rows().get(log.rows().size() - 1));
        assertEquals(List.of("03", "04", "05"), acks());
        assertEquals(2, counters.transactions());
        assertEquals(ids.length + 2 + 1, counters.changes());
    }

    /** A change the sequencer refuses ends the stream, after the changes gathered before it. */
    @Test
    void aChangeRefusedInsideARunEndsTheStreamAfterTheChangesBeforeIt() throws Exception {
        Subscription sub = subscribe("s");
        Throwable why = run(new ChangeSourceException("not reached"), begin("05"), insert("a"), insert("b"),
                Msgs.commit("06"));
        assertInstanceOf(UnrecoverableStreamException.class, why);
        assertEquals("commit watermark 06 does not match 'begin' watermark 05", why.getMessage());
        assertEquals(List.of("status", "begin", "insert", "insert", "rollback"), tags(received(sub)));
        assertTrue(log.storers.poll().aborted, "the partial transaction is dropped");
    }

    @Test
    void anInterruptedTransactionIsRolledBackOnceToSubscribersAndTheStorer() throws Exception {
        Subscription sub = subscribe("s");
        ChangeStreamClosedException closed = new ChangeStreamClosedException("connection closed");
        assertSame(closed, run(closed, begin("05"), insert("a")));
        List<String> got = received(sub);
        assertEquals(List.of("status", "begin", "insert", "rollback"), tags(got));
        assertEquals(ROLLBACK, got.get(3));
        assertTrue(log.storers.poll().aborted, "the storer drops the partial transaction");
        assertEquals(List.of("01,begin", "01,commit"), log.rows(), "nothing of 05 was stored");
    }

    @Test
    void anExplicitRollbackIsNotRolledBackAgain() throws Exception {
        Subscription sub = subscribe("s");
        run(new ChangeSourceException("connection reset"), begin("05"), insert("a"), rollback());
        assertEquals(List.of("status", "begin", "insert", "rollback"), tags(received(sub)));
        assertFalse(log.storers.poll().aborted);
    }

    @Test
    void aStorerFailureIsWhyTheStreamEnded() throws Exception {
        ChangeLogException cause = new ChangeLogException("change db connection lost");
        log.failNextCommit = cause;
        // The storer closes the stream; the session then finds it closed and reports the storer's failure.
        Throwable why = run(new ChangeStreamClosedException("never reached"), tx("03", "a"));
        assertSame(cause, why);
        assertTrue(acks().isEmpty(), "nothing durable, nothing acked");
    }

    @Test
    void aClosedStreamOfARemovedSourceIsASourceRemoval() throws Exception {
        control.sourceGone = true;
        assertInstanceOf(SourceRemovedException.class, run(new ChangeStreamClosedException("closed")));
    }

    @Test
    void aStopEndsTheSessionWithoutAnErrorAndRollsBackTheOpenTransaction() throws Exception {
        Subscription sub = subscribe("s");
        control.runningChecksLeft = 2; // the stop arrives while the begin is being forwarded
        assertNull(run(new ChangeSourceException("not reached"), begin("05"), insert("a")));
        assertEquals(List.of("status", "begin", "rollback"), tags(received(sub)));
        assertTrue(log.storers.poll().aborted);
    }

    @Test
    void aResetRequestEndsTheSessionBeforeTheNextMessage() throws Exception {
        control.resetPending = true;
        assertNull(run(new ChangeSourceException("not reached"), tx("03", "a")));
        assertEquals(List.of("01,begin", "01,commit"), log.rows());
    }

    @Test
    void anOrderingViolationEndsTheSession() throws Exception {
        Throwable why = run(new ChangeSourceException("not reached"), insert("a"));
        assertInstanceOf(UnrecoverableStreamException.class, why);
        assertEquals("data change (insert) received before 'begin' message", why.getMessage());
        assertTrue(StreamFailure.isFatal(why));
    }

    @Test
    void aLagReportIsPublishedToSubscribers() throws Exception {
        Subscription sub = subscribe("s");
        ChangeStreamMessage lag = new ChangeStreamMessage.StatusMessage(new DownstreamStatus(false,
                new LagReport(new Timings(150, 151, 152, Passthrough.NONE), 234, Passthrough.NONE), Passthrough.NONE),
                "02");
        run(new ChangeSourceException("end"), lag);
        List<String> got = received(sub);
        assertEquals(List.of("status", "status"), tags(got));
        assertTrue(got.get(1).contains("\"nextSendTimeMs\":234"), got.get(1));
        assertTrue(acks().isEmpty(), "no ack requested");
    }
}
