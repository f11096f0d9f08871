package org.zrm.replicator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.replicator.internal.Msgs.begin;
import static org.zrm.replicator.internal.Msgs.commit;
import static org.zrm.replicator.internal.Msgs.insertIssue;
import static org.zrm.replicator.internal.Msgs.status;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.replicator.internal.FakeChangeStreamer.FakeSubscription;

class ReplicatorTest {

    @TempDir
    Path dir;
    Path file;
    FakeChangeStreamer streamer = new FakeChangeStreamer();
    Replicator replicator;

    @BeforeEach
    void setUp() {
        file = dir.resolve("replica.db");
        replicator = new Replicator(new ReplicaFile(file, 1000), new InProcessChangeStreamClient(streamer), Msgs.CODEC,
                "task1", "task1/backup-replicator-1", 10, 50);
    }

    @AfterEach
    void tearDown() throws Exception {
        replicator.stop();
    }

    private List<Object> ids() throws Exception {
        try (Connection c = TestReplica.open(file)) {
            return TestReplica.rows(c, "SELECT id FROM issue ORDER BY id").stream().map(r -> r.get("id")).toList();
        }
    }

    private String stateVersion() throws Exception {
        try (Connection c = TestReplica.open(file)) {
            return TestReplica.stateVersion(c);
        }
    }

    @Test
    void subscribesInBackupModeAndAcksCommitsOnlyAfterTheyAreDurable() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        FakeSubscription sub = streamer.awaitSubscription();
        assertEquals(6, sub.context.protocolVersion());
        assertEquals("task1/backup-replicator-1", sub.context.id());
        assertEquals("task1", sub.context.taskID());
        assertEquals(ReplicatorMode.BACKUP, sub.context.mode());
        assertEquals("01", sub.context.replicaVersion());
        assertEquals("01", sub.context.watermark());
        assertTrue(sub.context.initial());

        List<String> stateAtCommitAck = new CopyOnWriteArrayList<>();
        sub.onConsumed = json -> {
            if (json.startsWith("[\"commit\"")) {
                try {
                    stateAtCommitAck.add(stateVersion() + ":" + ids());
                } catch (Exception e) {
                    stateAtCommitAck.add(e.toString());
                }
            }
        };
        sub.push(status(), begin("0a"), insertIssue("a", "one"), commit("0a"), begin("0b"), insertIssue("b", "two"),
                commit("0b"));
        sub.awaitConsumed(7);
        assertEquals(List.of("0a:[a]", "0b:[a, b]"), stateAtCommitAck);
        assertEquals(2, replicator.status().transactionsApplied());
        assertEquals("0b", replicator.status().stateVersion());
        assertTrue(replicator.status().connected());
        assertEquals(ReplicatorStatus.Phase.REPLICATING, replicator.status().phase());
    }

    @Test
    void reconnectsAfterAFailureAndResumesFromTheReplicaWatermark() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        FakeSubscription first = streamer.awaitSubscription();
        first.push(status(), begin("0a"), insertIssue("a", "one"), commit("0a"), begin("0b"), insertIssue("b", "two"));
        first.awaitConsumed(6);
        first.fail(new IOException("change log unavailable"));

        FakeSubscription second = streamer.awaitSubscription();
        assertEquals("0a", second.context.watermark(), "resumes from the replica's stateVersion");
        assertFalse(second.context.initial(), "the replica has advanced since the task started");
        assertTrue(replicator.status().lastError().contains("change log unavailable"), replicator.status().lastError());
        // The interrupted transaction was rolled back; it arrives again in full.
        assertEquals(List.of("a"), ids());
        second.push(status(), begin("0b"), insertIssue("b", "two"), commit("0b"));
        second.awaitConsumed(4);
        assertEquals(List.of("a", "b"), ids());
        assertEquals("0b", stateVersion());
        assertEquals(1, replicator.status().reconnects());
    }

    @Test
    void aResubscriptionBeforeAnyProgressIsStillInitial() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        streamer.awaitSubscription().end(); // the streamer closed the subscription normally
        FakeSubscription second = streamer.awaitSubscription();
        assertEquals("01", second.context.watermark());
        assertTrue(second.context.initial());
    }

    @Test
    void wrongReplicaVersionStopsUntilTheReplicaIsResynced() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        FakeSubscription first = streamer.awaitSubscription();
        first.push(Msgs.error(1, "current replica version is 05 (requested 01)"));
        Await.until("stop on error", () -> replicator.status().phase() == ReplicatorStatus.Phase.STOPPED_ON_ERROR);
        assertTrue(replicator.status().lastError().contains("WrongReplicaVersion: current replica version is 05"),
                replicator.status().lastError());
        assertEquals(1, first.consumed.size(), "the error frame is acknowledged");
        // With a 10 ms retry delay a retry would come at once; there is none for the rejected replica.
        assertNull(streamer.subscriptions.poll(300, TimeUnit.MILLISECONDS));

        TestReplica.create(file, "05"); // the change source re-synced the replica after the reset
        FakeSubscription second = streamer.awaitSubscription();
        assertEquals("05", second.context.replicaVersion());
        assertEquals("05", second.context.watermark());
        assertTrue(second.context.initial());
        second.push(status(), begin("0a"), insertIssue("x", "new"), commit("0a"));
        second.awaitConsumed(4);
        assertEquals(List.of("x"), ids());
    }

    @Test
    void watermarkTooOldStops() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        streamer.awaitSubscription().push(Msgs.error(2, "earliest supported watermark is 0f (requested 01)"));
        Await.until("stop on error", () -> replicator.status().phase() == ReplicatorStatus.Phase.STOPPED_ON_ERROR);
        assertTrue(replicator.status().lastError().contains("WatermarkTooOld: earliest supported watermark is 0f"),
                replicator.status().lastError());
        assertNull(streamer.subscriptions.poll(300, TimeUnit.MILLISECONDS));
    }

    @Test
    void malformedMessageIsReportedAndTheReplicatorResubscribes() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        FakeSubscription first = streamer.awaitSubscription();
        first.push(status(), begin("0a"), insertIssue("a", "one"), commit("0a"), begin("0b"), insertIssue("b", "two"),
                "[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\"}}]");
        FakeSubscription second = streamer.awaitSubscription();
        assertTrue(replicator.status().lastError().startsWith("malformed message from change streamer"),
                replicator.status().lastError());
        assertTrue(first.closed);
        assertEquals(6, first.consumed.size(), "the malformed message is not acknowledged");
        assertEquals("0a", second.context.watermark());
        assertEquals(List.of("a"), ids());
    }

    @Test
    void messageOutsideATransactionIsAnErrorAndTheReplicatorResubscribes() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        streamer.awaitSubscription().push(status(), insertIssue("a", "one"));
        FakeSubscription second = streamer.awaitSubscription();
        assertTrue(replicator.status().lastError().contains("outside of transaction"), replicator.status().lastError());
        assertEquals("01", second.context.watermark());
    }

    @Test
    void waitsForTheInitialSyncToProduceTheReplica() throws Exception {
        replicator.start();
        Await.until("waiting", () -> replicator.status().phase() == ReplicatorStatus.Phase.WAITING_FOR_REPLICA);
        assertNull(streamer.subscriptions.poll(200, TimeUnit.MILLISECONDS));
        assertFalse(file.toFile().exists(), "the replicator must not create the file itself");
        TestReplica.create(file, "03");
        FakeSubscription sub = streamer.awaitSubscription();
        assertEquals("03", sub.context.watermark());
    }

    @Test
    void stopRollsBackTheOpenTransactionAndClosesTheSubscription() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        FakeSubscription sub = streamer.awaitSubscription();
        sub.push(status(), begin("0a"), insertIssue("a", "one"));
        sub.awaitConsumed(3);
        replicator.stop();
        assertTrue(sub.closed);
        assertEquals(ReplicatorStatus.Phase.STOPPED, replicator.status().phase());
        assertEquals(List.of(), ids());
        assertEquals("01", stateVersion());
    }

    @Test
    void aReplacedReplicaFileIsReopenedBeforeTheNextTransaction() throws Exception {
        TestReplica.create(file, "01");
        replicator.start();
        FakeSubscription first = streamer.awaitSubscription();
        first.push(status(), begin("0a"), insertIssue("a", "one"), commit("0a"));
        first.awaitConsumed(4);
        TestReplica.create(file, "07"); // re-synced behind the replicator's back
        first.push(begin("0b"), insertIssue("b", "two"), commit("0b"));
        FakeSubscription second = streamer.awaitSubscription();
        assertTrue(replicator.status().lastError().contains("was replaced"), replicator.status().lastError());
        assertTrue(first.closed);
        assertEquals("07", second.context.replicaVersion());
        assertEquals("07", second.context.watermark());
        assertTrue(second.context.initial());
        assertEquals(List.of(), ids(), "nothing of the old stream went into the new file");
        second.push(status(), begin("0c"), insertIssue("c", "three"), commit("0c"));
        second.awaitConsumed(4);
        assertEquals(List.of("c"), ids());
    }
}
