package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.storer.internal.Fixture.txn;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.PurgeLock;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Two storers on one log: takeover, races and the purge-lock protocol (spec §3.11). */
@PostgresTest
class OwnershipTest {

    private record Outcome(String task, int committed, ChangeLogException failure) {
    }

    /** Both storers assume ownership at once and keep writing: exactly one wins, the loser writes nothing after losing. */
    @Test
    void twoStorersRacingForOwnership_exactlyOneWins(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 3);
        PgChangeLog a = new PgChangeLog(f.settings);
        PgChangeLog b = new PgChangeLog(f.settings);
        CyclicBarrier start = new CyclicBarrier(2);
        CountDownLatch bothAssumed = new CountDownLatch(2);
        CompletableFuture<Outcome> ra = CompletableFuture.supplyAsync(() -> race(a, "task-a", "a", start, bothAssumed));
        CompletableFuture<Outcome> rb = CompletableFuture.supplyAsync(() -> race(b, "task-b", "b", start, bothAssumed));
        Outcome oa = ra.get(60, TimeUnit.SECONDS);
        Outcome ob = rb.get(60, TimeUnit.SECONDS);
        assertTrue(oa.failure() == null ^ ob.failure() == null, "exactly one loses: " + oa + " " + ob);
        Outcome winner = oa.failure() == null ? oa : ob;
        Outcome loser = oa.failure() == null ? ob : oa;
        assertInstanceOf(OwnershipLostException.class, loser.failure());
        assertEquals(winner.task(), f.log.replicationState().owner());
        // The loser's rows are exactly its successful commits (5 rows each); nothing after losing.
        String prefix = loser.task().substring(5);
        assertEquals(loser.committed() * 5L, f.rows().stream().filter(r -> r.startsWith(prefix)).count());
        assertEquals(winner.committed() * 5L, f.rows().stream().filter(r -> r.startsWith(winner.task().substring(5))).count());
        // And it cannot store or purge any more.
        PgChangeLog loserLog = loser == oa ? a : b;
        try (ChangeLogTransaction tx = loserLog.beginTransaction(loser.task())) {
            for (ChangeLogEntry e : txn(prefix + "zzz", 3)) {
                tx.append(e);
            }
            assertThrows(OwnershipLostException.class, tx::commit);
        }
        assertThrows(OwnershipLostException.class, () -> loserLog.purgeBefore("99", loser.task()));
        assertEquals(loser.committed() * 5L, f.rows().stream().filter(r -> r.startsWith(prefix)).count());
        a.close();
        b.close();
        f.close();
    }

    private static Outcome race(PgChangeLog log, String task, String prefix, CyclicBarrier start,
            CountDownLatch bothAssumed) {
        int committed = 0;
        try {
            start.await();
            log.assumeOwnership(task, task + ":4849");
            bothAssumed.countDown();
            int afterBoth = 0;
            for (int i = 0; i < 500 && afterBoth < 5; i++) {
                if (bothAssumed.getCount() == 0) {
                    afterBoth++;
                }
                try (ChangeLogTransaction tx = log.beginTransaction(task)) {
                    for (ChangeLogEntry e : txn(prefix + String.format("%04d", i), 3)) {
                        tx.append(e);
                    }
                    tx.commit();
                }
                committed++;
            }
            return new Outcome(task, committed, null);
        } catch (ChangeLogException e) {
            return new Outcome(task, committed, e);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Upstream "ownership takeover before tx begins" / "not possible during tx": the UPDATE waits for the open writer. */
    @Test
    void takeoverWaitsForTheOpenTransactionThenTheOldOwnerFails(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        PgChangeLog newcomer = new PgChangeLog(f.settings);
        ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK);
        tx.append(Fixture.begin("08"));
        CompletableFuture<Void> takeover = CompletableFuture.runAsync(() -> {
            try {
                newcomer.assumeOwnership("new-task", "new:4849");
            } catch (ChangeLogException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThrows(TimeoutException.class, () -> takeover.get(300, TimeUnit.MILLISECONDS));
        tx.append(Fixture.insert("08", 1, "x"));
        tx.append(Fixture.commit("08", 2));
        tx.commit(); // the lock taken at begin protected this transaction
        takeover.get(10, TimeUnit.SECONDS);
        try (ChangeLogTransaction next = f.log.beginTransaction(Fixture.TASK)) {
            for (ChangeLogEntry e : txn("0f", 1)) {
                next.append(e);
            }
            assertEquals("changeLog ownership has been assumed by new-task",
                    assertThrows(OwnershipLostException.class, next::commit).getMessage());
        }
        assertEquals("08", f.log.replicationState().lastWatermark());
        assertEquals("new-task", f.log.replicationState().owner());
        assertFalse(f.rows().stream().anyMatch(r -> r.startsWith("0f")));
        newcomer.close();
        f.close();
    }

    /** Startup share lock → old owner's purge fails fast; after takeover and release, it aborts on the owner check. */
    @Test
    void purgeLockAndTakeoverProtocol(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        PgChangeLog newcomer = new PgChangeLog(f.settings);
        PurgeLock lock = newcomer.acquirePurgeLock().orElseThrow();
        assertEquals("00", lock.minWatermark());
        ChangeLogException blocked = assertThrows(ChangeLogException.class, () -> f.log.purgeBefore("06", Fixture.TASK));
        assertEquals("55P03", ((SQLException) blocked.getCause()).getSQLState());
        newcomer.assumeOwnership("new-task", "new:4849");
        lock.close();
        assertThrows(OwnershipLostException.class, () -> f.log.purgeBefore("06", Fixture.TASK));
        assertEquals(8, f.rows().size());
        assertEquals(5, newcomer.purgeBefore("06", "new-task"));
        assertEquals(List.of("06:0:begin", "06:1:update", "06:2:commit"), f.rows());
        newcomer.close();
        f.close();
    }
}
