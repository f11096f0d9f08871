package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.CODEC;
import static org.zrm.changesource.pg.internal.SourceFixture.exec;
import static org.zrm.changesource.pg.internal.SourceFixture.queryString;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.pg.internal.backfill.BackfillRun;
import org.zrm.changesource.pg.internal.backfill.BackfillStreamer;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.RowKey;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.PostgresTest;
import org.zrm.watermark.Lsn;

/**
 * The backfill manager wired into the Postgres change source, against a real upstream but with a
 * trivial in-test snapshot reader (a plain {@code SELECT}; the real reader is tested on its own):
 * a table joining the publication with rows is requested from the live stream, requests from the
 * change log are resumed, and the backfill's transactions enter the stream between live ones.
 */
@PostgresTest
class BackfillWiringPgTest {

    private static final String SCHEMA = """
            CREATE TABLE live(id INT PRIMARY KEY, v TEXT);
            CREATE TABLE big(id INT PRIMARY KEY, v TEXT);
            INSERT INTO big SELECT g, 'v' || g FROM generate_series(1, 50) g;
            CREATE PUBLICATION zero_pub FOR TABLE live;
            """;

    private final PgCluster cluster;
    private final List<BackfillRequest> requests = new CopyOnWriteArrayList<>();

    BackfillWiringPgTest(PgCluster cluster) {
        this.cluster = cluster;
    }

    /** Reads the request's columns with one SELECT, at the current WAL position as watermark. */
    private BackfillStreamer selectStreamer(SyncedShard[] shard) {
        return request -> {
            requests.add(request);
            List<String> key = new ArrayList<>(request.table().metadata().rowKey().keySet());
            List<String> cols = new ArrayList<>();
            for (String c : request.columns().keySet()) {
                if (!key.contains(c)) {
                    cols.add(c);
                }
            }
            List<String> all = new ArrayList<>(key);
            all.addAll(cols);
            List<List<Object>> rows = new ArrayList<>();
            String watermark;
            try (Connection c = shard[0].connect(); Statement st = c.createStatement()) {
                watermark = Lsn.parse(queryString(c, "SELECT pg_current_wal_lsn()")).toWatermark();
                try (ResultSet rs = st.executeQuery("SELECT " + String.join(",", all) + " FROM "
                        + request.table().schema() + "." + request.table().name() + " ORDER BY 1")) {
                    while (rs.next()) {
                        List<Object> row = new ArrayList<>();
                        for (int i = 1; i <= all.size(); i++) {
                            row.add(rs.getObject(i));
                        }
                        rows.add(row);
                    }
                }
            } catch (java.sql.SQLException e) {
                throw new org.zrm.changesource.ChangeSourceException(e.getMessage(), e);
            }
            Relation rel = new Relation(request.table().schema(), request.table().name(), new RowKey(key));
            Iterator<DataOrSchemaChange> it = List.<DataOrSchemaChange>of(
                    new Backfill(rel, cols, watermark, rows, null, Passthrough.NONE),
                    new BackfillCompleted(rel, cols, watermark, null, Passthrough.NONE)).iterator();
            return new BackfillRun() {
                @Override
                public String watermark() {
                    return watermark;
                }

                @Override
                public DataOrSchemaChange next() {
                    return it.hasNext() ? it.next() : null;
                }

                @Override
                public void close() {
                }
            };
        };
    }

    /** Takes data messages until a backfill-completed, checking that transactions are contiguous and ordered. */
    private static List<DataMessage> takeThroughCompletion(ChangeStream stream, List<BeginMessage> backfillBegins)
            throws Exception {
        List<DataMessage> data = new ArrayList<>();
        String open = null;
        String last = "";
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        boolean completed = false;
        while (true) {
            assertTrue(System.nanoTime() < deadline, "no backfill-completed after " + data.size() + " data messages");
            ChangeStreamMessage m = stream.poll(Duration.ofSeconds(1));
            if (m == null || m instanceof StatusMessage) {
                continue;
            }
            if (m instanceof BeginMessage b) {
                assertNull(open, "nested begin");
                open = b.commitWatermark();
                assertTrue(open.compareTo(last) > 0, open + " after " + last);
                if (b.begin().skipsAck()) {
                    backfillBegins.add(b);
                }
            } else if (m instanceof CommitMessage c) {
                assertEquals(open, c.watermark());
                last = open;
                open = null;
                if (completed) {
                    return data;
                }
            } else if (m instanceof DataMessage d) {
                assertNotNull(open, "data outside a transaction");
                data.add(d);
                completed |= d.change() instanceof BackfillCompleted;
            }
        }
    }

    @Test
    void tableJoiningThePublicationIsBackfilledBesideTheStream(@TempDir Path dir) throws Exception {
        SyncedShard[] holder = new SyncedShard[1];
        try (SyncedShard shard = SyncedShard.start(cluster, dir, SCHEMA, List.of("zero_pub"), null,
                selectStreamer(holder))) {
            holder[0] = shard;
            ChangeStream stream = shard.stream();
            try (Connection c = shard.connect()) {
                exec(c, "ALTER PUBLICATION zero_pub ADD TABLE big");
                // A live commit after the snapshot lets backfill-completed through.
                exec(c, "INSERT INTO live VALUES (1, 'after')");
            }
            List<BeginMessage> backfillBegins = new ArrayList<>();
            List<DataMessage> data = takeThroughCompletion(stream, backfillBegins);
            CreateTable create = (CreateTable) data.stream().map(DataMessage::change)
                    .filter(ch -> ch instanceof CreateTable t && t.spec().name().equals("big")).findFirst().orElseThrow();
            assertEquals(List.of("id", "v"), List.copyOf(create.backfill().keySet()), "ALTER PUBLICATION backfills");
            Backfill rows = (Backfill) data.stream().map(DataMessage::change).filter(ch -> ch instanceof Backfill)
                    .findFirst().orElseThrow();
            assertEquals(50, rows.rowValues().size());
            assertEquals(List.of("v"), rows.columns());
            assertTrue(backfillBegins.size() >= 1);
            for (BeginMessage b : backfillBegins) {
                assertEquals(JsonFormat.STRINGIFIED, b.begin().json());
                assertEquals("[\"begin\",{\"tag\":\"begin\",\"json\":\"s\",\"skipAck\":true},{\"commitWatermark\":\""
                        + b.commitWatermark() + "\"}]", CODEC.encode(b));
                assertTrue(b.commitWatermark().contains(".") || b.commitWatermark().equals(rows.watermark()),
                        "a minor version between two stream positions, or the snapshot's: " + b.commitWatermark());
            }
            assertEquals(1, requests.size());
            assertEquals("big", requests.get(0).table().name());
            assertNotNull(requests.get(0).table().metadata(), "the request carries the table's metadata");
            assertEquals(List.of(), shard.source.backfillStatus(), "completed");
        }
    }

    /**
     * The same table join with the real snapshot reader, in binary and text COPY mode: 50 rows
     * arrive at the snapshot's watermark, and no snapshot slot is left behind.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void theRealSnapshotReaderBackfillsATableJoiningThePublication(boolean textCopy, @TempDir Path dir)
            throws Exception {
        try (SyncedShard shard = SyncedShard.startWithSnapshotBackfills(cluster, dir, SCHEMA, List.of("zero_pub"),
                textCopy)) {
            ChangeStream stream = shard.stream();
            try (Connection c = shard.connect()) {
                exec(c, "ALTER PUBLICATION zero_pub ADD TABLE big");
                exec(c, "INSERT INTO live VALUES (1, 'after')");
            }
            List<DataMessage> data = takeThroughCompletion(stream, new ArrayList<>());
            List<List<Object>> rows = new ArrayList<>();
            String watermark = null;
            for (DataMessage d : data) {
                if (d.change() instanceof Backfill b) {
                    rows.addAll(b.rowValues());
                    watermark = b.watermark();
                }
            }
            assertEquals(50, rows.size());
            assertEquals(List.of(1, "v1"), List.of(((Number) rows.get(0).get(0)).intValue(), rows.get(0).get(1)));
            BackfillCompleted done = (BackfillCompleted) data.get(data.size() - 1).change();
            assertEquals(watermark, done.watermark());
            try (Connection c = shard.connect()) {
                assertEquals("0", queryString(c, "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '%_bf_%'"),
                        "the snapshot slot is gone");
            }
            assertEquals(List.of(), shard.source.backfillStatus(), "completed");
        }
    }

    @Test
    void changeLogRequestsAreResumed(@TempDir Path dir) throws Exception {
        SyncedShard[] holder = new SyncedShard[1];
        try (SyncedShard shard = SyncedShard.start(cluster, dir, SCHEMA, List.of("zero_pub"), null,
                selectStreamer(holder))) {
            holder[0] = shard;
            try (Connection c = shard.connect()) {
                exec(c, "INSERT INTO live VALUES (7, 'seven')");
            }
            // A change DB left this request (e.g. by a zero-cache before ZRM took over).
            BackfillRequest resumed = CODEC.decodeBackfillRequest("{\"table\":{\"schema\":\"public\",\"name\":\"live\","
                    + "\"metadata\":{\"rowKey\":{\"id\":{\"attNum\":1}}}},\"columns\":{\"v\":{\"attNum\":2}}}");
            ChangeStream stream = shard.source.startStream(shard.state.watermark(), List.of(resumed));
            try (Connection c = shard.connect()) {
                exec(c, "INSERT INTO live VALUES (8, 'eight')");
            }
            List<BeginMessage> backfillBegins = new ArrayList<>();
            List<DataMessage> data = takeThroughCompletion(stream, backfillBegins);
            Backfill rows = (Backfill) data.stream().map(DataMessage::change).filter(ch -> ch instanceof Backfill)
                    .findFirst().orElseThrow();
            assertTrue(rows.rowValues().contains(List.of(7, "seven")), rows.rowValues().toString());
            assertEquals(CODEC.encode(resumed), CODEC.encode(requests.get(0)), "the change log's request, unchanged");
            assertEquals(List.of(), shard.source.backfillStatus());
        }
    }

    @Test
    void aFailedRunIsRetriedAndItsErrorShown(@TempDir Path dir) throws Exception {
        SyncedShard[] holder = new SyncedShard[1];
        BackfillStreamer real = selectStreamer(holder);
        java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch failed = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch reopened = new java.util.concurrent.CountDownLatch(1);
        BackfillStreamer flaky = request -> {
            if (attempts.incrementAndGet() == 1) {
                failed.countDown();
                throw new org.zrm.changesource.ChangeSourceException("snapshot slot unavailable");
            }
            BackfillRun run = real.open(request);
            reopened.countDown();
            return run;
        };
        try (SyncedShard shard = SyncedShard.start(cluster, dir, SCHEMA, List.of("zero_pub"), null, flaky)) {
            holder[0] = shard;
            ChangeStream stream = shard.stream();
            try (Connection c = shard.connect()) {
                exec(c, "ALTER PUBLICATION zero_pub ADD TABLE big");
            }
            assertTrue(failed.await(20, java.util.concurrent.TimeUnit.SECONDS));
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            java.util.Map<String, Object> status;
            do {
                assertTrue(System.nanoTime() < deadline, "no retrying state in " + shard.source.backfillStatus());
                Thread.onSpinWait();
                List<java.util.Map<String, Object>> all = shard.source.backfillStatus();
                status = all.isEmpty() ? java.util.Map.of() : all.get(0);
            } while (!"retrying".equals(status.get("state")));
            assertEquals("public.big", status.get("table"));
            assertEquals(1, status.get("retries"));
            assertEquals("snapshot slot unavailable", status.get("lastError"));
            assertTrue(reopened.await(20, java.util.concurrent.TimeUnit.SECONDS), "retried after the back-off");
            // A live commit after the retry's snapshot lets its backfill-completed through.
            try (Connection c = shard.connect()) {
                exec(c, "INSERT INTO live VALUES (2, 'later')");
            }
            List<BeginMessage> backfillBegins = new ArrayList<>();
            List<DataMessage> data = takeThroughCompletion(stream, backfillBegins);
            assertTrue(data.stream().anyMatch(d -> d.change() instanceof Backfill b && b.rowValues().size() == 50));
            assertEquals(2, attempts.get(), "retried once, after the back-off");
            assertEquals(List.of(), shard.source.backfillStatus());
        }
    }
}
