package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changestreamer.internal.ChangeStreamerServicePgTest.commitWatermark;
import static org.zrm.changestreamer.internal.ChangeStreamerServicePgTest.tag;
import static org.zrm.changestreamer.internal.Msgs.begin;
import static org.zrm.changestreamer.internal.Msgs.commit;
import static org.zrm.changestreamer.internal.Msgs.insert;
import static org.zrm.changestreamer.internal.Msgs.resetRequired;
import static org.zrm.changestreamer.internal.Msgs.tx;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changelog.WatermarkTooOldException;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.changestreamer.internal.ChangeStreamerService.State;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The supervisor's state machine over an in-memory change log and a fake source: start, restart
 * after a retryable failure, stop on a fatal one, and auto-reset (re-sync in process, a second
 * reset during the re-sync is fatal, no re-sync without autoReset). No Postgres.
 */
@Timeout(30)
class StreamSupervisorTest {

    private static final String ROLLBACK = "[\"rollback\",{\"tag\":\"rollback\"}]";
    private static final String TASK = "task-id";

    private final MemoryChangeLog log = new MemoryChangeLog();
    private final Forwarder forwarder = new Forwarder(System::currentTimeMillis);
    private final StreamerCounters counters = new StreamerCounters();
    private final ProtocolCodec codec = new ProtocolCodec();
    private final SubscriberRegistry registry = new SubscriberRegistry(forwarder, counters, codec, 1 << 20, 16,
            "[\"status\",{\"tag\":\"status\"}]");
    private FakeChangeSource source;
    private StreamSupervisor supervisor;

    private void start(StreamerSettings settings, FakeChangeSource src) {
        start(settings, src, src);
    }

    private void start(StreamerSettings settings, FakeChangeSource src, ChangeStreamerService.SourceProvider sources) {
        start(settings, src, sources, () -> true);
    }

    private void start(StreamerSettings settings, FakeChangeSource src, ChangeStreamerService.SourceProvider sources,
            java.util.function.BooleanSupplier replicaExists) {
        source = src;
        StreamSession.Parts parts = new StreamSession.Parts(settings, log, (snapshot, requests) -> {
            throw new AssertionError("the in-memory storer answers catch-ups itself");
        }, log, registry, forwarder, codec, counters);
        Purger purger = new Purger(log, settings.taskID(), forwarder::acks, new Reservations(), new ManualTimer(),
                settings.cleanupDelay());
        supervisor = new StreamSupervisor(parts, sources, purger, replicaExists);
        supervisor.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (supervisor != null) {
            supervisor.stop(Duration.ofSeconds(10));
        }
    }

    private Subscription subscribe(String id, String watermark, String replicaVersion, ReplicatorMode mode) {
        return registry.subscribe(new SubscriberContext(ChangeStreamer.PROTOCOL_VERSION, id, TASK, mode,
                replicaVersion, watermark, false), supervisor);
    }

    /**
     * The registration of a subscriber is handed to whoever holds the stream lock (here the
     * session, mid-transaction), so it lands a moment after {@code subscribe} returns.
     */
    private Subscriber awaitRegistered(String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            java.util.Optional<Subscriber> sub = registry.subscribers().stream().filter(s -> s.id.equals(id)).findFirst();
            if (sub.isPresent()) {
                return sub.get();
            }
            Thread.sleep(5);
        }
        throw new AssertionError("subscriber " + id + " was not registered within 10 s");
    }

    private void expectAcks(String... watermarks) throws InterruptedException {
        for (String w : watermarks) {
            ChangeSourceUpstream ack = source.acks.poll(10, TimeUnit.SECONDS);
            assertEquals(w, ack == null ? null : ack.watermark());
        }
    }

    private static List<String> tags(List<String> msgs) {
        return msgs.stream().map(ChangeStreamerServicePgTest::tag).toList();
    }

    /** Waits for the first stream; stores 03 and leaves a subscriber in the middle of 04. */
    private Drain streamIntoOpenTransaction() throws Exception {
        assertEquals(Boolean.FALSE, source.initializations.poll(10, TimeUnit.SECONDS));
        assertEquals(TASK, log.ownerships.poll(10, TimeUnit.SECONDS));
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        Drain d = new Drain(subscribe("myid", "01", "01", ReplicatorMode.SERVING));
        assertEquals("status", tag(d.next()));
        source.push(tx("03", "a"));
        assertEquals("03", commitWatermark(d.next(3).get(2)));
        expectAcks("03");
        source.push(begin("04"), insert("b"));
        assertEquals(List.of("begin", "insert"), tags(d.next(2)));
        return d;
    }

    /** After a re-sync to replica version 05: initialized with a reset, owned again, streaming the new lineage. */
    private void expectResyncedTo05() throws Exception {
        assertEquals(Boolean.TRUE, source.initializations.poll(10, TimeUnit.SECONDS), "initialize(true): re-sync");
        assertEquals(TASK, log.ownerships.poll(10, TimeUnit.SECONDS), "ownership taken again");
        assertEquals("05", source.startWatermarks.poll(10, TimeUnit.SECONDS), "streaming resumed in the new lineage");
        assertEquals(1, counters.resets());
        assertEquals("05", registry.replicaVersion());
        try (Drain old = new Drain(subscribe("old-lineage", "03", "01", ReplicatorMode.SERVING))) {
            assertEquals("[\"error\",{\"type\":1,\"message\":\"current replica version is 05 (requested 01)\"}]",
                    old.next());
        }
        try (Drain d = new Drain(subscribe("new-lineage", "05", "05", ReplicatorMode.SERVING))) {
            assertEquals("status", tag(d.next()));
            source.push(tx("07", "c"));
            assertEquals("07", commitWatermark(d.next(3).get(2)));
            expectAcks("07");
        }
        assertEquals(State.STREAMING, supervisor.state(), "the live transaction came through a running session");
        assertNull(supervisor.lastError());
        assertEquals(List.of("05,begin", "05,commit", "07,begin", "07,insert", "07,commit"), log.rows());
    }

    @Test
    void withoutALocalReplicaThePurgeLockIsReleasedBeforeTheInitialSync() throws Exception {
        log.offerPurgeLock = true;
        FakeChangeSource src = new FakeChangeSource("01");
        start(ChangeStreamerServicePgTest.DEFAULTS, src, src, () -> false);
        assertEquals(Boolean.FALSE, src.initializations.poll(10, TimeUnit.SECONDS));
        assertTrue(log.purgeLockClosed.get(), "an initial sync must not wait for the lock's transaction");
        assertEquals("01", src.startWatermarks.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void withALocalReplicaThePurgeLockIsHeldThroughInitialization() throws Exception {
        log.offerPurgeLock = true;
        FakeChangeSource src = new FakeChangeSource("01");
        start(ChangeStreamerServicePgTest.DEFAULTS, src, src, () -> true);
        assertEquals(Boolean.FALSE, src.initializations.poll(10, TimeUnit.SECONDS));
        assertEquals(1, log.purgeLockRequests.get());
        assertEquals(TASK, log.ownerships.poll(10, TimeUnit.SECONDS));
        assertEquals("01", src.startWatermarks.poll(10, TimeUnit.SECONDS));
        assertTrue(log.purgeLockClosed.get(), "released once the log is owned");
    }

    @Test
    void aSourceMissingPastTheGraceIsReportedOnceAndALateOneStillStarts() throws Exception {
        FakeChangeSource src = new FakeChangeSource("01");
        ChangeStreamerComponent.SourceSlot slot = new ChangeStreamerComponent.SourceSlot(
                "(zrm.changesource.type=nonsense)", Duration.ofMillis(50));
        slot.registered(java.util.Map.of(org.osgi.framework.Constants.SERVICE_ID, 7L, "zrm.changesource.type", "pg"), true);
        start(ChangeStreamerServicePgTest.DEFAULTS, src, slot);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (supervisor.lastError() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        String error = supervisor.lastError();
        assertTrue(error != null && error.contains("(zrm.changesource.type=nonsense)") && error.contains("types: pg"),
                "" + error);
        assertEquals(State.STARTING, supervisor.state());
        assertNull(src.initializations.poll(100, TimeUnit.MILLISECONDS), "nothing initialized without a source");
        slot.set(src);
        assertEquals(Boolean.FALSE, src.initializations.poll(10, TimeUnit.SECONDS), "a late source starts the stream");
        assertEquals("01", src.startWatermarks.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void resetRequiredWithAutoResetResyncsInProcess() throws Exception {
        FakeChangeSource src = new FakeChangeSource("01");
        src.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS, src);
        MemoryChangeLog.MemoryStorer first;
        try (Drain d = streamIntoOpenTransaction()) {
            first = log.storers.poll(10, TimeUnit.SECONDS);
            source.push(resetRequired("schema change not supported"));
            assertEquals(ROLLBACK, d.next(), "the open transaction is rolled back");
            assertEquals(Drain.END, d.next(), "the subscription ends so that the client reconnects");
            assertTrue(d.sub.failure().orElseThrow() instanceof ResetRequiredException, "" + d.sub.failure());
        }
        assertEquals(1, log.resetMarks, "the log was marked before the re-sync");
        assertTrue(first.aborted, "the storer dropped the open transaction");
        assertTrue(first.stopped);
        expectResyncedTo05();
    }

    @Test
    void backupBehindTheLogResyncsInProcess() throws Exception {
        FakeChangeSource src = new FakeChangeSource("01");
        src.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS, src);
        try (Drain serving = streamIntoOpenTransaction()) {
            Subscription backup = subscribe("backup-id", "02", "01", ReplicatorMode.BACKUP);
            Subscriber backupSub = awaitRegistered("backup-id");
            // What the catch-up reader reports when the backup's watermark was purged.
            supervisor.backupBehind(backupSub, new WatermarkTooOldException("03", "02"));
            assertEquals(ROLLBACK, serving.next());
            assertEquals(Drain.END, serving.next(), "every subscription ends with the reset");
            assertTrue(backup.failure().orElseThrow().getMessage()
                    .contains("backup replica at watermark 02 is behind change db: 03)"), "" + backup.failure());
        }
        assertEquals(1, log.resetMarks);
        expectResyncedTo05();
    }

    @Test
    void sourceAutoResetSignalResyncsInProcess() throws Exception {
        FakeChangeSource src = new FakeChangeSource("01");
        src.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS, src);
        try (Drain d = streamIntoOpenTransaction()) {
            source.nextStream().fail(new AutoResetException("replication slot zoro_0_1 was invalidated"));
            assertEquals(ROLLBACK, d.next());
            assertEquals(Drain.END, d.next());
        }
        expectResyncedTo05();
    }

    /** Upstream: a second reset signal (the re-sync did not resolve it) is fatal. */
    @Test
    void aResetThatTheResyncDoesNotResolveStops() throws Exception {
        start(ChangeStreamerServicePgTest.DEFAULTS, new FakeChangeSource("01")); // initialize(true) keeps 01
        try (Drain d = streamIntoOpenTransaction()) {
            source.push(resetRequired(null));
            assertEquals(ROLLBACK, d.next());
        }
        assertTrue(supervisor.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(Boolean.TRUE, source.initializations.poll(10, TimeUnit.SECONDS));
        assertEquals(State.STOPPED, supervisor.state());
        assertTrue(supervisor.lastError().contains("ResetRequiredException"), supervisor.lastError());
        assertEquals(1, counters.resets());
        assertNull(log.ownerships.poll(), "no ownership after the failed re-sync");
        Subscription late = subscribe("late", "01", "01", ReplicatorMode.SERVING);
        assertTrue(late.failure().orElseThrow().getMessage().startsWith("change streamer is stopped: "
                + "ResetRequiredException"), "" + late.failure());
    }

    @Test
    void withoutAutoResetAResetRequiredMessageOnlyMarksTheLog() throws Exception {
        start(ChangeStreamerServicePgTest.DEFAULTS.withAutoReset(false), new FakeChangeSource("01"));
        try (Drain d = streamIntoOpenTransaction()) {
            source.push(resetRequired("schema change not supported"));
            source.push(commit("04"));
            assertEquals("commit", tag(d.next()), "the stream goes on");
            expectAcks("04");
        }
        assertEquals(1, log.resetMarks);
        assertEquals(0, counters.resets());
        assertNull(source.initializations.poll(100, TimeUnit.MILLISECONDS), "no re-sync");
        assertEquals(State.STREAMING, supervisor.state());
    }

    @Test
    void withoutAutoResetASourceAutoResetSignalStops() throws Exception {
        FakeChangeSource src = new FakeChangeSource("01");
        src.resetVersions.add("05");
        start(ChangeStreamerServicePgTest.DEFAULTS.withAutoReset(false), src);
        try (Drain d = streamIntoOpenTransaction()) {
            source.nextStream().fail(new AutoResetException("replication slot zoro_0_1 was invalidated"));
            assertEquals(ROLLBACK, d.next());
            assertEquals(Drain.END, d.next());
        }
        assertTrue(supervisor.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(State.STOPPED, supervisor.state());
        assertTrue(supervisor.lastError().contains("replication slot zoro_0_1 was invalidated"), supervisor.lastError());
        assertNull(source.initializations.poll(100, TimeUnit.MILLISECONDS), "no re-sync without autoReset");
        assertEquals(0, counters.resets());
    }

    @Test
    void aRetryableFailureBacksOffAndResumesFromTheLastStoredWatermark() throws Exception {
        start(ChangeStreamerServicePgTest.DEFAULTS, new FakeChangeSource("01"));
        assertEquals(Boolean.FALSE, source.initializations.poll(10, TimeUnit.SECONDS));
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        FakeChangeSource.FakeStream first = source.nextStream();
        source.push(tx("04", "a"));
        expectAcks("04");
        first.fail(new ChangeSourceException("connection reset"));
        assertEquals("04", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        assertEquals(1, counters.restarts());
        assertEquals(0, counters.resets());
        assertNull(source.initializations.poll(100, TimeUnit.MILLISECONDS), "the same source is not initialized again");
        assertEquals(TASK, log.ownerships.poll(10, TimeUnit.SECONDS));
        assertNull(log.ownerships.poll(), "a restart keeps ownership");
    }

    @Test
    void aStorerFailureRestartsTheStream() throws Exception {
        start(ChangeStreamerServicePgTest.DEFAULTS, new FakeChangeSource("01"));
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS));
        log.failNextCommit = new ChangeLogException("change db connection lost");
        source.push(tx("04", "a"));
        assertEquals("01", source.startWatermarks.poll(10, TimeUnit.SECONDS), "04 was not stored: resume before it");
        assertEquals(1, counters.restarts());
        source.push(tx("04", "a"));
        expectAcks("04");
    }

    @Test
    void aMalformedStreamStops() throws Exception {
        start(ChangeStreamerServicePgTest.DEFAULTS, new FakeChangeSource("01"));
        source.push(begin("05"), commit("06"));
        assertTrue(supervisor.awaitStopped(Duration.ofSeconds(10)));
        assertEquals(State.STOPPED, supervisor.state());
        assertTrue(supervisor.lastError().contains("commit watermark 06 does not match 'begin' watermark 05"),
                supervisor.lastError());
        assertEquals(0, counters.restarts(), "retrying would replay the same broken stream");
    }

    @Test
    void ownershipLostStopsAndARetryableOwnershipFailureIsRetried() throws Exception {
        log.ownershipFailures.add(new ChangeLogException("change db restarting"));
        start(ChangeStreamerServicePgTest.DEFAULTS, new FakeChangeSource("01"));
        assertEquals(TASK, log.ownerships.poll(10, TimeUnit.SECONDS), "taken on the second try");
        supervisor.stop(Duration.ofSeconds(10));

        MemoryChangeLog other = new MemoryChangeLog();
        other.ownershipFailures.add(new OwnershipLostException("task other-task owns the change log", "other-task"));
        StreamSession.Parts parts = new StreamSession.Parts(ChangeStreamerServicePgTest.DEFAULTS, other,
                (snapshot, requests) -> { }, other, registry, forwarder, codec, counters);
        supervisor = new StreamSupervisor(parts, new FakeChangeSource("01"), new Purger(other, TASK, forwarder::acks,
                new Reservations(), new ManualTimer(), Duration.ofSeconds(30)));
        supervisor.start();
        assertTrue(supervisor.awaitStopped(Duration.ofSeconds(10)));
        assertTrue(supervisor.lastError().startsWith("OwnershipLostException"), supervisor.lastError());
        assertTrue(supervisor.initialized().isDone(), "initialization comes before ownership");
    }

    @Test
    void stopEndsTheStreamAndRollsBackAnOpenTransaction() throws Exception {
        start(ChangeStreamerServicePgTest.DEFAULTS, new FakeChangeSource("01"));
        try (Drain d = streamIntoOpenTransaction()) {
            supervisor.stop(Duration.ofSeconds(10));
            assertEquals(ROLLBACK, d.next());
            assertEquals(Drain.END, d.next());
        }
        assertEquals(State.STOPPED, supervisor.state());
        assertNull(supervisor.lastError(), "an orderly stop is no error");
        assertEquals(0, counters.restarts());
    }
}
