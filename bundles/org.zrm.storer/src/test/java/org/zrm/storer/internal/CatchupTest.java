package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.storer.internal.Fixture.txn;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupFrames;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.WatermarkTooOldException;
import org.zrm.changelog.WrongReplicaVersionException;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Catch-up reads: start rules, snapshot boundary, bounded fetches, and catch-up concurrent with storing. */
@PostgresTest
class CatchupTest {

    private static List<ChangeLogEntry> readAll(CatchupCursor cursor) throws Exception {
        List<ChangeLogEntry> out = new ArrayList<>();
        for (List<ChangeLogEntry> batch = cursor.nextBatch(); !batch.isEmpty(); batch = cursor.nextBatch()) {
            assertTrue(batch.size() <= PgCatchupSnapshot.FETCH_ROWS);
            out.addAll(batch);
        }
        return out;
    }

    @Test
    void noQueueingIfNotInTransaction_catchupFromReplicaVersionReturnsStoredRowsAsFrames(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "00")) {
            assertEquals("06", snap.lastWatermark());
            List<String> frames = readAll(c).stream().map(CatchupFrames::rebuild).toList();
            assertEquals(List.of(
                    "[\"begin\",{\"tag\":\"begin\",\"foo\":\"bar\"},{\"commitWatermark\":\"03\"}]",
                    "[\"data\",{\"tag\":\"insert\"}]",
                    "[\"commit\",{\"tag\":\"commit\",\"bar\":\"baz\"},{\"watermark\":\"03\"}]",
                    "[\"begin\",{\"tag\":\"begin\",\"boo\":\"dar\"},{\"commitWatermark\":\"06\"}]",
                    "[\"data\",{\"tag\":\"update\"}]",
                    "[\"commit\",{\"tag\":\"commit\",\"boo\":\"far\"},{\"watermark\":\"06\"}]"), frames);
            assertTrue(c.foundStart());
        }
        f.close();
    }

    @Test
    void rowsInAnotherWritersShapeAreReadWithTheirTagAndTextUnchanged(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        // json keeps the text as written: key order and whitespace that zero-cache or a hand-made
        // row may have must neither change the frame nor hide the tag.
        String foreign = "{ \"relation\": {\"tag\": \"x\"}, \"tag\" : \"update\" }";
        f.exec("UPDATE " + f.schema.table("changeLog") + " SET change = ?::json WHERE watermark = '06' AND pos = 1",
                foreign);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "03")) {
            ChangeLogEntry row = readAll(c).get(1);
            assertEquals("update", row.tag());
            assertEquals("[\"data\"," + foreign + "]", CatchupFrames.rebuild(row));
        }
        f.close();
    }

    @Test
    void aRowWithoutATagFailsTheCatchupWithItsWatermark(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.exec("UPDATE " + f.schema.table("changeLog") + " SET change = '{\"no\":\"tag\"}' WHERE watermark = '06' AND pos = 1");
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "03")) {
            ChangeLogException e = assertThrows(ChangeLogException.class, c::nextBatch);
            assertTrue(e.getMessage().startsWith("change-log row at 06 is not a change: cannot read the tag"),
                    e.getMessage());
        }
        f.close();
    }

    @Test
    void rowsAtTheSubscribersOwnWatermarkAreSkipped(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "03")) {
            assertEquals(List.of("06", "06", "06"), readAll(c).stream().map(ChangeLogEntry::watermark).toList());
            assertTrue(c.foundStart());
        }
        f.close();
    }

    @Test
    void watermarkTooOld(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.log.purgeBefore("04", Fixture.TASK);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "01")) {
            WatermarkTooOldException e = assertThrows(WatermarkTooOldException.class, c::nextBatch);
            assertEquals("earliest supported watermark is 06 (requested 01)", e.getMessage());
            assertEquals("06", e.earliest());
        }
        f.close();
    }

    @Test
    void subscriberAheadOfLatestDurableWatermark_isNotAnError(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "11")) {
            assertEquals(List.of(), c.nextBatch());
            assertFalse(c.foundStart());
        }
        f.close();
    }

    @Test
    void wrongReplicaVersion(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot()) {
            WrongReplicaVersionException e = assertThrows(WrongReplicaVersionException.class,
                    () -> snap.catchup("01foobar", "03"));
            assertEquals("current replica version is 00 (requested 01foobar)", e.getMessage());
        }
        f.close();
    }

    @Test
    void catchupDoesNotIncludeSubsequentTransactions(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot()) {
            f.store(txn("08", 1));
            try (CatchupCursor c = snap.catchup("00", "03")) {
                assertEquals(3, readAll(c).size());
            }
            // One cursor after another on the same snapshot, same boundary.
            try (CatchupCursor c = snap.catchup("00", "00")) {
                assertEquals(6, readAll(c).size());
            }
        }
        f.close();
    }

    @Test
    void largeLogIsReadInBoundedBatches(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.store(txn("08", 4998)); // 5000 rows
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot(); CatchupCursor c = snap.catchup("00", "06")) {
            List<Integer> sizes = new ArrayList<>();
            for (List<ChangeLogEntry> b = c.nextBatch(); !b.isEmpty(); b = c.nextBatch()) {
                sizes.add(b.size());
            }
            assertEquals(List.of(2000, 2000, 1000), sizes);
        }
        f.close();
    }

    /**
     * A log that grew since its last ANALYZE is read through the primary key, in order, without a
     * sort: from the stale estimate the planner otherwise chose a bitmap scan and a sort that
     * spilled to disk (catchup-W5: 300 MB for a million rows).
     */
    @Test
    void aLogThatGrewSinceItsLastAnalyzeIsReadThroughTheIndexWithoutASort(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.exec("ANALYZE " + f.schema.table("changeLog"));
        f.store(txn("08", 20_000));
        try (CatchupSnapshot snap = f.log.openCatchupSnapshot();
                PreparedStatement ps = ((PgCatchupSnapshot) snap).connection()
                        .prepareStatement("EXPLAIN " + PgCatchupSnapshot.catchupSql(f.schema))) {
            ps.setString(1, "00");
            ps.setString(2, snap.lastWatermark());
            List<String> plan = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    plan.add(rs.getString(1));
                }
            }
            assertTrue(plan.get(0).startsWith("Index Scan using \"changeLog_pkey\""), String.join("\n", plan));
            assertFalse(plan.stream().anyMatch(l -> l.contains("Sort") || l.contains("JIT")), String.join("\n", plan));
        }
        f.close();
    }

    /**
     * The storer pins a snapshot between two transactions and hands it to a reader, then keeps
     * storing. Catch-up set + live set (transactions stored after the pin) = the log after the
     * subscriber's watermark: no gap, no duplicate.
     */
    @Test
    void catchupConcurrentWithStoring_noGapNoDuplicate(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 7);
        ExecutorService readers = Executors.newFixedThreadPool(2);
        List<String> all = new ArrayList<>();
        List<Future<Set<String>>> catchups = new ArrayList<>();
        List<Integer> pinnedAfter = new ArrayList<>();
        for (int i = 1; i <= 60; i++) {
            String w = String.format("1%03d", i);
            f.store(txn(w, 20));
            all.add(w);
            if (i % 15 == 0) {
                CatchupSnapshot snap = f.log.openCatchupSnapshot(); // pinned before the next store
                pinnedAfter.add(i);
                catchups.add(readers.submit(() -> {
                    try (snap; CatchupCursor c = snap.catchup("00", "1005")) {
                        Set<String> seen = new LinkedHashSet<>();
                        for (ChangeLogEntry e : readAll(c)) {
                            if (e.tag().equals("commit")) {
                                assertTrue(seen.add(e.watermark()), "duplicate " + e.watermark());
                            }
                        }
                        return seen;
                    }
                }));
            }
        }
        for (int k = 0; k < catchups.size(); k++) {
            Set<String> caughtUp = catchups.get(k).get(60, TimeUnit.SECONDS);
            List<String> live = all.subList(pinnedAfter.get(k), all.size());
            List<String> union = new ArrayList<>(caughtUp);
            union.addAll(live);
            assertEquals(all.subList(5, all.size()), union);
        }
        readers.shutdown();
        f.close();
    }

    @Test
    void snapshotIsPinnedBeforeItIsReturned(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        CatchupSnapshot snap = CompletableFuture.supplyAsync(() -> {
            try {
                return f.log.openCatchupSnapshot();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        f.store(txn("08", 1));
        try (snap; CatchupCursor c = snap.catchup("00", "06")) {
            assertEquals(List.of(), c.nextBatch());
            assertTrue(c.foundStart());
        }
        f.close();
    }
}
