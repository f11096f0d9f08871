package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Ports of {@code schema/tables.pg.test.ts} (spec §3.5, §3.13). */
@PostgresTest
class ReplicationConfigTest {

    private static SubscriptionState state(String version, String watermark, String... pubs) {
        return new SubscriptionState(version, List.of(pubs), watermark);
    }

    private static List<String> config(Fixture f) throws Exception {
        return f.strings("SELECT \"replicaVersion\" || ' ' || array_to_string(publications, ',') || ' '"
                + " || coalesce(\"resetRequired\"::text, 'null') FROM " + f.schema.table("replicationConfig"));
    }

    @Test
    void ensureReplicationConfig(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 1);
        f.exec("TRUNCATE " + f.schema.table("replicationState") + ", " + f.schema.table("changeLog") + ", "
                + f.schema.table("replicationConfig"));
        f.log.ensureReplicationConfig(state("01", "01", "a", "b"), true);
        assertEquals(List.of("01 a,b null"), config(f));
        assertEquals(List.of("01 - -"), f.strings("SELECT \"lastWatermark\" || ' ' || coalesce(owner, '-') || ' '"
                + " || coalesce(\"ownerAddress\", '-') FROM " + f.schema.table("replicationState")));
        assertEquals(List.of("01:0:begin", "01:1:commit"), f.rows());
        assertEquals(List.of("{\"tag\":\"begin\"}", "{\"tag\":\"commit\"}"),
                f.strings("SELECT change::text FROM " + f.schema.table("changeLog") + " ORDER BY pos"));

        // Same publications in another order: no-op (rows written since are kept).
        f.log.assumeOwnership(Fixture.TASK, "change-streamer:12345");
        f.store(Fixture.txn("05", 1));
        f.log.ensureReplicationConfig(state("01", "05", "b", "a"), true);
        assertEquals(5, f.rows().size());

        // resetRequired: logged without autoReset, signalled with it.
        f.log.markResetRequired();
        assertEquals(List.of("01 a,b true"), config(f));
        f.log.ensureReplicationConfig(state("01", "05", "a", "b"), false);
        assertEquals("reset required by replication stream", assertThrows(ResetRequiredException.class,
                () -> f.log.ensureReplicationConfig(state("01", "05", "a", "b"), true)).getMessage());

        // A new replica version past its initial watermark cannot reset the log.
        assertEquals("Cannot reset change db@01 to service replica@02 from watermark 07",
                assertThrows(ResetRequiredException.class,
                        () -> f.log.ensureReplicationConfig(state("02", "07", "a", "b"), true)).getMessage());

        // A new replica version at its initial watermark resets everything.
        f.exec("INSERT INTO " + f.schema.table("tableMetadata") + " VALUES ('s', 't', '{}')");
        f.exec("INSERT INTO " + f.schema.table("backfilling") + " VALUES ('s', 't', 'c', '{}')");
        f.log.ensureReplicationConfig(state("02", "02", "c"), true);
        assertEquals(List.of("02 c null"), config(f));
        assertEquals(List.of("02:0:begin", "02:1:commit"), f.rows());
        assertEquals("02", f.log.replicationState().lastWatermark());
        assertEquals(List.of("0"), f.strings("SELECT (SELECT count(*) FROM " + f.schema.table("tableMetadata")
                + ") + (SELECT count(*) FROM " + f.schema.table("backfilling") + ")"));
        f.close();
    }

    /** A reset's TRUNCATE blocked by old catch-up readers terminates them (after the configured delay). */
    @Test
    void terminateChangeDBLockHoldersWithMultipleBlockers(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        PgChangeLog other = new PgChangeLog(f.settings);
        CatchupSnapshot s1 = other.openCatchupSnapshot();
        CatchupSnapshot s2 = other.openCatchupSnapshot();
        CatchupCursor c1 = s1.catchup("00", "00");
        CatchupCursor c2 = s2.catchup("00", "00");
        c1.nextBatch(); // both readers now hold locks on changeLog
        c2.nextBatch();
        long start = System.nanoTime();
        f.log.ensureReplicationConfig(state("01", "01"), true);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // Waited for the terminate delay (1 s in the fixture), not forever.
        assertEquals(true, ms >= 900 && ms < 20_000, "took " + ms + " ms");
        assertEquals(List.of("01:0:begin", "01:1:commit"), f.rows());
        // The terminated readers' connections are gone; using them fails cleanly.
        c1.close();
        c2.close();
        assertThrows(ChangeLogException.class, () -> s1.catchup("00", "00").nextBatch());
        assertThrows(ChangeLogException.class, () -> s2.catchup("00", "00").nextBatch());
        s1.close();
        s2.close();
        other.close();
        f.close();
    }

    @Test
    void noDeadlocksWhenTableIsReset(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        // A writer holding the owner row lock blocks the reset until it commits; the reset then proceeds.
        var tx = f.log.beginTransaction(Fixture.TASK);
        tx.append(Fixture.begin("08"));
        var reset = java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                new PgChangeLog(f.settings.withLockHolderTerminateMs(60_000))
                        .ensureReplicationConfig(state("01", "01"), true);
            } catch (ChangeLogException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200); // give the reset time to queue behind the writer's row lock
        tx.append(Fixture.commit("08", 1));
        tx.commit();
        reset.get(30, TimeUnit.SECONDS);
        assertEquals(List.of("01:0:begin", "01:1:commit"), f.rows());
        f.close();
    }
}
