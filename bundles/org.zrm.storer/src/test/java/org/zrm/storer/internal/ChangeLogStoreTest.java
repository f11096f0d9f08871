package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.storer.internal.Fixture.begin;
import static org.zrm.storer.internal.Fixture.commit;
import static org.zrm.storer.internal.Fixture.data;
import static org.zrm.storer.internal.Fixture.insert;
import static org.zrm.storer.internal.Fixture.txn;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.PurgeLock;
import org.zrm.protocol.BackfillRequest;
import org.zrm.storer.internal.StorerSettings.InsertMode;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Ports of upstream's {@code storer.pg.test.ts} write/purge cases, plus batching and group commit. */
@PostgresTest
class ChangeLogStoreTest {

    private static final String CREATE_TABLE_WITH_BACKFILL = "{\"tag\":\"create-table\",\"spec\":{\"schema\":\"my\","
            + "\"name\":\"foo\",\"columns\":{}},\"backfill\":{\"a\":{\"fooID\":1,\"barID\":\"x\"}}}";

    @ParameterizedTest
    @EnumSource(InsertMode.class)
    void changeLogBatchingSmallBatchSize_flushesPreservePosOrderAcrossBatchesAndASchemaChange(InsertMode mode,
            PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db, 3, mode);
        f.store(begin("08"), insert("08", 1, "a"), insert("08", 2, "b"), insert("08", 3, "c"),
                data("08", 4, CREATE_TABLE_WITH_BACKFILL), insert("08", 5, "d"), insert("08", 6, "e"),
                insert("08", 7, "f"), commit("08", 8));
        assertEquals(List.of("08:0:begin", "08:1:insert", "08:2:insert", "08:3:insert", "08:4:create-table",
                "08:5:insert", "08:6:insert", "08:7:insert", "08:8:commit"),
                f.strings("SELECT watermark || ':' || pos || ':' || (change->>'tag') FROM " + f.schema.table("changeLog")
                        + " WHERE watermark = '08' ORDER BY pos"));
        var params = f.log.streamStartParameters();
        assertEquals("08", params.lastWatermark());
        assertEquals(1, params.backfillRequests().size());
        f.close();
    }

    /** Text that must survive byte for byte: bigints, escapes, \u0000, non-ASCII, odd spacing, a schema change. */
    private static List<ChangeLogEntry> awkwardRows(String w) {
        List<ChangeLogEntry> rows = new ArrayList<>();
        rows.add(begin(w, "{\"tag\":\"begin\",\"json\":\"s\"}"));
        rows.add(data(w, 1, "{\"tag\":\"insert\",\"new\":{\"big\":987654321987654321,\"s\":\"a\\\"b\\\\c\\u0000\\n\"}}"));
        rows.add(data(w, 2, "{\"tag\":\"insert\",\"new\":{\"ü\":\"日本\",\"e\":1e+21}}"));
        rows.add(data(w, 3, CREATE_TABLE_WITH_BACKFILL));
        rows.add(new ChangeLogEntry(w, 4, "insert", "{ \"tag\" : \"insert\",\n\t\"new\":{\"emoji\":\"😀\",\"tab\":\"\\t\"} }", null));
        for (int i = 5; i < 9; i++) {
            rows.add(insert(w, i, "r" + i));
        }
        rows.add(commit(w, 9));
        return rows;
    }

    static List<Arguments> modesAndBatchSizes() {
        List<Arguments> out = new ArrayList<>();
        for (InsertMode mode : InsertMode.values()) {
            for (int size : new int[] {1, 2, 3, 2000}) {
                out.add(Arguments.of(mode, size));
            }
        }
        return out;
    }

    /** Batch sizes 1 (unbatched), 2, 3 and 2000 in both insert modes, with a schema change in the middle of a batch. */
    @ParameterizedTest
    @MethodSource("modesAndBatchSizes")
    void batchingBoundaries_rowsAndTextSurviveEveryBatchSize(InsertMode mode, int batchSize, PgDatabase db)
            throws Exception {
        Fixture f = Fixture.empty(db, batchSize, mode);
        List<ChangeLogEntry> rows = awkwardRows("0a");
        f.store(rows.toArray(ChangeLogEntry[]::new));
        List<String> stored = f.strings("SELECT change::text FROM " + f.schema.table("changeLog")
                + " WHERE watermark = '0a' ORDER BY pos");
        assertEquals(rows.stream().map(ChangeLogEntry::change).toList(), stored);
        assertEquals(List.of("0a"), f.strings("SELECT precommit FROM " + f.schema.table("changeLog")
                + " WHERE precommit IS NOT NULL AND watermark = '0a'"));
        assertEquals(List.of("9"), f.strings("SELECT max(pos)::text FROM " + f.schema.table("changeLog")
                + " WHERE precommit IS NOT NULL AND watermark = '0a'"));
        assertEquals("0a", f.log.replicationState().lastWatermark());
        f.close();
    }

    /**
     * A bulk transaction's batches ramp up from 128 rows, doubling to the configured size, so the
     * database starts writing after the first rows instead of after a whole batch; every row is
     * stored once, in order.
     */
    @Test
    void batchesRampUpToTheConfiguredSize(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 2000);
        int rows = 128 + 256 + 512 + 1024 + 2000 + 2000 + 80;
        long batches;
        try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
            tx.append(begin("0d"));
            for (int i = 1; i <= rows; i++) {
                tx.append(insert("0d", i, "r" + i));
            }
            tx.append(commit("0d", rows + 1));
            batches = ((PgChangeLogTransaction) tx).batches();
            tx.commit();
        }
        // 128 (begin + 127 inserts), 256, 512, 1024, 2000, 2000, then the rest at commit.
        assertEquals(6, batches);
        assertEquals(List.of(Integer.toString(rows + 2)), f.strings("SELECT count(*)::text FROM "
                + f.schema.table("changeLog") + " WHERE watermark = '0d'"));
        assertEquals(List.of(Integer.toString(rows + 1)), f.strings("SELECT max(pos)::text FROM "
                + f.schema.table("changeLog") + " WHERE watermark = '0d'"));
        f.close();
    }

    /**
     * The insert-mode decision rests on this: COPY and json_to_recordset store byte-identical rows
     * (every column, compared as the raw UTF-8 bytes the server holds), across batch boundaries,
     * schema changes and several upstream transactions in one database transaction.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 2000})
    void insertModes_storeByteIdenticalRows(int batchSize, PgDatabase db) throws Exception {
        Map<InsertMode, List<String>> stored = new java.util.EnumMap<>(InsertMode.class);
        for (InsertMode mode : InsertMode.values()) {
            Fixture f = Fixture.empty(db, batchSize, mode);
            f.store(awkwardRows("0a").toArray(ChangeLogEntry[]::new));
            try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
                for (String w : List.of("0b", "0c")) {
                    for (ChangeLogEntry e : txn(w, 7)) {
                        tx.append(e);
                    }
                }
                tx.commit();
            }
            stored.put(mode, f.strings("SELECT encode(convert_to(watermark, 'UTF8'), 'hex') || ' ' || pos || ' '"
                    + " || encode(convert_to(change::text, 'UTF8'), 'hex') || ' ' || coalesce(precommit, '<null>')"
                    + " || ' ' || pg_column_size(change) FROM " + f.schema.table("changeLog") + " ORDER BY watermark, pos"));
            f.close();
        }
        assertEquals(2 + 10 + 9 + 9, stored.get(InsertMode.COPY).size());
        assertEquals(stored.get(InsertMode.JSON), stored.get(InsertMode.COPY));
    }

    /** Postgres validates the json column in both modes: invalid change text fails the transaction, nothing is kept. */
    @ParameterizedTest
    @EnumSource(InsertMode.class)
    void invalidChangeJsonIsRejectedInEitherMode(InsertMode mode, PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db, 3, mode);
        List<ChangeLogEntry> rows = new ArrayList<>(List.of(txn("09", 4)));
        rows.set(2, new ChangeLogEntry("09", 2, "insert", "{\"tag\":\"insert\",", null));
        ChangeLogException e = assertThrows(ChangeLogException.class, () -> f.store(rows.toArray(ChangeLogEntry[]::new)));
        assertTrue(e.getMessage().contains("invalid input syntax for type json"), e.getMessage());
        assertEquals(8, f.rows().size());
        assertEquals("06", f.log.replicationState().lastWatermark());
        f.store(txn("0a", 4)); // the pool is still usable
        assertEquals(14, f.rows().size());
        f.close();
    }

    @Test
    void groupCommit_severalUpstreamTransactionsInOneDatabaseTransaction(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 4);
        try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
            for (String w : List.of("01", "02", "03")) {
                for (ChangeLogEntry e : txn(w, 2)) {
                    tx.append(e);
                }
            }
            // Nothing is visible before the commit.
            assertEquals(List.of("00:0:begin", "00:1:commit"), f.rows());
            assertEquals("00", f.log.replicationState().lastWatermark());
            tx.commit();
        }
        assertEquals(2 + 3 * 4, f.rows().size());
        assertEquals("03", f.log.replicationState().lastWatermark());
        f.close();
    }

    @Test
    void groupCommit_orderViolationsAndMidTransactionCommitAreRejected(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 2000);
        List<List<ChangeLogEntry>> bad = List.of(
                List.of(insert("01", 0, "x")),                                  // no begin
                List.of(begin("01"), insert("01", 2, "x")),                     // pos gap
                List.of(begin("01"), insert("02", 1, "x")),                     // watermark change
                List.of(begin("01"), begin("01")),                              // nested begin
                List.of(begin("01"), new ChangeLogEntry("01", 1, "rollback", "{\"tag\":\"rollback\"}", null)),
                List.of(begin("02"), commit("02", 1), begin("02")),             // not after previous commit
                List.of(begin("02"), commit("02", 1), begin("01")),
                List.of(begin("01"), new ChangeLogEntry("01", 1, "insert", "{\"tag\":\"insert\"}", "01")));
        for (List<ChangeLogEntry> rows : bad) {
            try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
                assertThrows(ChangeLogException.class, () -> {
                    for (ChangeLogEntry e : rows) {
                        tx.append(e);
                    }
                }, rows.toString());
                // The transaction is dead after a rejected row.
                assertThrows(ChangeLogException.class, tx::commit);
            }
        }
        try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
            for (ChangeLogEntry e : txn("01", 1)) {
                tx.append(e);
            }
            tx.append(begin("02"));
            ChangeLogException e = assertThrows(ChangeLogException.class, tx::commit);
            assertTrue(e.getMessage().contains("middle of upstream transaction 02"), e.getMessage());
        }
        assertEquals(List.of("00:0:begin", "00:1:commit"), f.rows());
        f.close();
    }

    @Test
    void ownerAddressIsSetCorrectly(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 2000);
        assertEquals("change-streamer:12345", f.log.replicationState().ownerAddress());
        assertEquals("change-streamer:12345", PgChangeLog.discoveryAddress("ws", "change-streamer:12345"));
        String wss = PgChangeLog.discoveryAddress("wss", "change-streamer:12345");
        assertEquals("wss://change-streamer:12345", wss);
        f.log.assumeOwnership(Fixture.TASK, wss);
        assertEquals("wss://change-streamer:12345", f.log.discoverOwnerAddress().orElseThrow());
        f.close();
    }

    @Test
    void purge(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        assertEquals(2, f.log.purgeBefore("02", Fixture.TASK));
        assertEquals(0, f.log.purgeBefore("03", Fixture.TASK));
        assertEquals(3, f.log.purgeBefore("04", Fixture.TASK));
        assertEquals(0, f.log.purgeBefore("06", Fixture.TASK));
        // The latest stored transaction is kept even when the bound is past it.
        assertEquals(0, f.log.purgeBefore("99", Fixture.TASK));
        assertEquals(List.of("06:0:begin", "06:1:update", "06:2:commit"), f.rows());
        assertEquals("06", f.log.changeLogState().minWatermark());
        f.close();
    }

    @Test
    void sizeAndADryRunOfThePurgeMatchWhatThePurgeDeletes(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        assertEquals(new org.zrm.changelog.ChangeLogSize(8, "00", "06"), f.log.size());
        assertEquals(2, f.log.countPurgeable("02"));
        assertEquals(5, f.log.countPurgeable("04"));
        assertEquals(5, f.log.countPurgeable("99"), "the newest transaction is never purgeable");
        assertEquals(8, f.rows().size(), "a dry run deletes nothing");
        assertEquals(5, f.log.purgeBefore("99", Fixture.TASK));
        assertEquals(new org.zrm.changelog.ChangeLogSize(3, "06", "06"), f.log.size());
        f.exec("DELETE FROM " + f.schema.table("changeLog"));
        assertEquals(new org.zrm.changelog.ChangeLogSize(0, null, null), f.log.size());
        assertEquals(0, f.log.countPurgeable("99"));
        f.close();
    }

    @Test
    void purgeDoesNotDeleteAnythingWhenChangeLogIsEmpty(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.exec("DELETE FROM " + f.schema.table("changeLog"));
        assertEquals(0, f.log.purgeBefore("99", Fixture.TASK));
        // Upstream logs and falls back to the replica version for an empty log.
        assertEquals("00", f.log.changeLogState().minWatermark());
        f.close();
    }

    /** Chunked purge: bounded rows per transaction, same total, keep-latest still holds. */
    @Test
    void purgeChunking_deletesInBoundedChunksAndKeepsLatest(PgDatabase db) throws Exception {
        Fixture f = Fixture.empty(db, 2000);
        PgChangeLog chunked = new PgChangeLog(f.settings.withPurgeChunkRows(4));
        for (int i = 1; i <= 5; i++) {
            f.store(txn("0" + i, 3)); // 5 rows each
        }
        // 2 initial rows + 4 transactions of 5 rows below 05; 05 is kept.
        assertEquals(22, chunked.purgeBefore("99", Fixture.TASK));
        assertEquals(List.of("05:0:begin", "05:1:insert", "05:2:insert", "05:3:insert", "05:4:commit"), f.rows());
        chunked.close();
        f.close();
    }

    @Test
    void nonOwnerPurgePrevented(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.exec("UPDATE " + f.schema.table("replicationState") + " SET owner = 'different-task-id'");
        OwnershipLostException e = assertThrows(OwnershipLostException.class, () -> f.log.purgeBefore("06", Fixture.TASK));
        assertEquals("aborting changeLog purge to 06 because ownership has been taken by different-task-id", e.getMessage());
        assertEquals("different-task-id", e.newOwner());
        assertEquals(8, f.rows().size());
        f.close();
    }

    @Test
    void purgePreventedByPurgeLock(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        assertEquals(2, f.log.purgeBefore("03", Fixture.TASK));
        PurgeLock lock = f.log.acquirePurgeLock().orElseThrow();
        assertEquals("03", lock.minWatermark());
        assertEquals("00", lock.replicaVersion());
        ChangeLogException e = assertThrows(ChangeLogException.class, () -> f.log.purgeBefore("06", Fixture.TASK));
        assertEquals("55P03", assertInstanceOf(SQLException.class, e.getCause()).getSQLState());
        assertEquals(6, f.rows().size());
        lock.close();
        assertEquals(3, f.log.purgeBefore("06", Fixture.TASK));
        assertEquals(List.of("06:0:begin", "06:1:update", "06:2:commit"), f.rows());
        lock.close(); // redundant release is a no-op
        f.close();
    }

    @Test
    void purgeLockOnEmptyChangeLog(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.exec("DELETE FROM " + f.schema.table("changeLog"));
        assertTrue(f.log.acquirePurgeLock().isEmpty());
        f.close();
    }

    @Test
    void ownershipChangeDetectedAtBeginAbortsTransaction(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        f.exec("UPDATE " + f.schema.table("replicationState") + " SET owner = 'other-task'");
        try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
            for (ChangeLogEntry e : txn("08", 1)) {
                tx.append(e);
            }
            OwnershipLostException e = assertThrows(OwnershipLostException.class, tx::commit);
            assertEquals("changeLog ownership has been assumed by other-task", e.getMessage());
        }
        assertEquals(8, f.rows().size());
        assertEquals("06", f.log.replicationState().lastWatermark());
        f.close();
    }

    @Test
    void ownershipChangeNotPossibleDuringTransaction(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
            tx.append(begin("08"));
            tx.append(insert("08", 1, "foo"));
            SQLException e = assertThrows(SQLException.class, () -> f.exec(
                    "SELECT owner FROM " + f.schema.table("replicationState") + " FOR UPDATE NOWAIT"));
            assertEquals("55P03", e.getSQLState());
            tx.append(commit("08", 2));
            tx.commit();
        }
        assertEquals(List.of(Fixture.TASK), f.strings("SELECT owner FROM " + f.schema.table("replicationState") + " FOR UPDATE"));
        f.close();
    }

    @Test
    void abort(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        try (ChangeLogTransaction tx = f.log.beginTransaction(Fixture.TASK)) {
            tx.append(begin("0b"));
            tx.append(insert("0b", 1, "foo"));
            // closed without commit: rolled back
        }
        f.store(begin("0a"), insert("0a", 1, "bar"), commit("0a", 2));
        assertEquals(List.of("0a:0:begin", "0a:1:insert", "0a:2:commit"),
                f.rows().stream().filter(r -> r.compareTo("0a") >= 0).toList());
        f.close();
    }

    /** Upstream "retry on unexpected storage error": a PK conflict fails the transaction, nothing of it is kept. */
    /** A batch write blocked on a lock fails after the statement timeout in either mode (COPY has no client-side timeout). */
    @ParameterizedTest
    @EnumSource(InsertMode.class)
    void blockedBatchWriteFailsAfterTheStatementTimeout(InsertMode mode, PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db, 3, mode);
        PgChangeLog strict = new PgChangeLog(f.settings.withStatementTimeoutMs(1000));
        try (Connection locker = db.connect()) {
            locker.setAutoCommit(false);
            sql(locker, "LOCK TABLE " + f.schema.table("changeLog") + " IN ACCESS EXCLUSIVE MODE");
            long start = System.nanoTime();
            ChangeLogException e = assertThrows(ChangeLogException.class, () -> {
                try (ChangeLogTransaction tx = strict.beginTransaction(Fixture.TASK)) {
                    for (ChangeLogEntry row : txn("09", 4)) {
                        tx.append(row);
                    }
                    tx.commit();
                }
            });
            assertTrue(e.getMessage().contains("canceling statement"), e.getMessage());
            assertTrue(System.nanoTime() - start < 15_000_000_000L, "timed out only after the 1 s statement timeout");
            locker.rollback();
        }
        assertEquals(8, f.rows().size());
        assertEquals("06", f.log.replicationState().lastWatermark());
        strict.close();
        f.close();
    }

    @ParameterizedTest
    @EnumSource(InsertMode.class)
    void unexpectedStorageError_nothingOfTheTransactionIsCommitted(InsertMode mode, PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db, 2, mode);
        f.exec("INSERT INTO " + f.schema.table("changeLog") + " VALUES ('09', 3, '{\"tag\":\"insert\"}', NULL)");
        ChangeLogException e = assertThrows(ChangeLogException.class, () -> f.store(txn("09", 4)));
        assertTrue(e.getMessage().contains("duplicate key"), e.getMessage());
        assertEquals(List.of("09:3:insert"), f.rows().stream().filter(r -> r.startsWith("09")).toList());
        assertEquals("06", f.log.replicationState().lastWatermark());
        // The pool is still usable afterwards.
        f.store(txn("0a", 1));
        f.close();
    }

    @Test
    void backfillMetadataTracking(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        assertEquals(List.of(), f.log.streamStartParameters().backfillRequests());
        // Table metadata alone is stored but yields no request.
        f.store(begin("09"), data("09", 1, "{\"tag\":\"create-table\",\"spec\":{\"schema\":\"my\",\"name\":\"foo\","
                + "\"columns\":{}},\"metadata\":{\"rowKey\":{\"type\":\"index\",\"columns\":[\"a\",\"b\"]}}}"), commit("09", 2));
        assertEquals(List.of(), f.log.streamStartParameters().backfillRequests());
        // Backfill only: metadata null.
        f.store(begin("0a"), data("0a", 1, "{\"tag\":\"create-table\",\"spec\":{\"schema\":\"your\",\"name\":\"bar\","
                + "\"columns\":{}},\"backfill\":{\"a\":{\"fooID\":987,\"barID\":\"zoo\"},\"b\":{\"fooID\":843,\"barID\":\"ozz\"}}}"),
                commit("0a", 2));
        var reqs = f.log.streamStartParameters().backfillRequests();
        assertEquals(1, reqs.size());
        assertEquals("bar", reqs.get(0).table().name());
        assertEquals(null, reqs.get(0).table().metadata());
        assertEquals(List.of("a", "b"), List.copyOf(reqs.get(0).columns().keySet()));
        // add-column with backfill on the table that has metadata, then a column rename.
        f.store(begin("0b"), data("0b", 1, "{\"tag\":\"add-column\",\"table\":{\"schema\":\"my\",\"name\":\"foo\"},"
                + "\"column\":{\"name\":\"c\",\"spec\":{\"pos\":3,\"dataType\":\"text\"}},\"backfill\":{\"id\":3}}"),
                data("0b", 2, "{\"tag\":\"update-column\",\"table\":{\"schema\":\"your\",\"name\":\"bar\"},"
                        + "\"old\":{\"name\":\"a\",\"spec\":{\"pos\":1,\"dataType\":\"text\"}},"
                        + "\"new\":{\"name\":\"aa\",\"spec\":{\"pos\":1,\"dataType\":\"text\"}}}"),
                data("0b", 3, "{\"tag\":\"drop-column\",\"table\":{\"schema\":\"your\",\"name\":\"bar\"},\"column\":\"b\"}"),
                commit("0b", 4));
        Map<String, BackfillRequest> byTable = new java.util.TreeMap<>();
        for (BackfillRequest r : f.log.streamStartParameters().backfillRequests()) {
            byTable.put(r.table().name(), r);
        }
        assertEquals(List.of("bar", "foo"), List.copyOf(byTable.keySet()));
        assertEquals(List.of("aa"), List.copyOf(byTable.get("bar").columns().keySet()));
        assertEquals(List.of("c"), List.copyOf(byTable.get("foo").columns().keySet()));
        assertEquals(List.of("a", "b"), byTable.get("foo").table().metadata().rowKey().get("columns"));
        // rename-table moves both; backfill-completed clears the column; drop-table clears the rest.
        f.store(begin("0c"), data("0c", 1, "{\"tag\":\"rename-table\",\"old\":{\"schema\":\"my\",\"name\":\"foo\"},"
                + "\"new\":{\"schema\":\"my\",\"name\":\"foo2\"}}"),
                data("0c", 2, "{\"tag\":\"backfill-completed\",\"relation\":{\"schema\":\"your\",\"name\":\"bar\","
                        + "\"rowKey\":{\"columns\":[\"id\"]}},\"columns\":[\"aa\"],\"watermark\":\"0c\"}"),
                commit("0c", 3));
        reqs = f.log.streamStartParameters().backfillRequests();
        assertEquals(1, reqs.size());
        assertEquals("foo2", reqs.get(0).table().name());
        assertEquals(List.of("a", "b"), reqs.get(0).table().metadata().rowKey().get("columns"));
        f.store(begin("0d"), data("0d", 1, "{\"tag\":\"drop-table\",\"id\":{\"schema\":\"my\",\"name\":\"foo2\"}}"),
                commit("0d", 2));
        assertEquals(List.of(), f.log.streamStartParameters().backfillRequests());
        assertEquals(List.of("0"), f.strings("SELECT count(*)::text FROM " + f.schema.table("tableMetadata")));
        f.close();
    }

    @Test
    void malformedSchemaChangeIsRejectedAndNothingStored(PgDatabase db) throws Exception {
        Fixture f = Fixture.standard(db);
        ChangeLogException e = assertThrows(ChangeLogException.class, () -> f.store(begin("09"),
                data("09", 1, "{\"tag\":\"create-table\",\"spec\":42}"), commit("09", 2)));
        assertTrue(e.getMessage().contains("malformed create-table change"), e.getMessage());
        assertEquals(8, f.rows().size());
        f.close();
    }

    static void sql(Connection c, String s) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(s);
        }
    }
}
