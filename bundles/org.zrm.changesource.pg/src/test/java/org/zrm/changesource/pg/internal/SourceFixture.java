package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.watermark.Lsn;

/** Helpers shared by the Postgres-backed stream tests. */
final class SourceFixture {

    static final ProtocolCodec CODEC = new ProtocolCodec();
    static final ShardId SHARD = new ShardId("zero", 0);

    private SourceFixture() {}

    static PgSourceSettings settings(String uri) {
        return PgSourceSettings.defaults(uri, SHARD, List.of()).withLagReportIntervalMs(0);
    }

    /** A source for streaming tests; initialisation is not used. */
    static PgChangeSource source(PgSourceSettings settings) {
        return new PgChangeSource(settings, reset -> {
            throw new ChangeSourceException("not used by this test");
        });
    }

    static void exec(Connection c, String... sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        }
    }

    /** Runs the statements in one transaction. */
    static void tx(Connection c, String... sql) throws SQLException {
        c.setAutoCommit(false);
        try {
            exec(c, sql);
            c.commit();
        } finally {
            c.setAutoCommit(true);
        }
    }

    static String queryString(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** Creates a pgoutput slot and returns the watermark of its consistent point. */
    static String createSlot(Connection c, String slot) throws SQLException {
        String lsn = queryString(c, "SELECT lsn FROM pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
        return Lsn.parse(lsn).toWatermark();
    }

    /**
     * The parts of the shard schema that {@code startStream} reads ({@code replicas},
     * {@code shardConfig}), with one replica row for {@code slot}; the full setup belongs to the
     * setup package and is tested there. The shard is one with event triggers
     * ({@code ddlDetection = true}); degraded mode needs a real {@code initialSchema} and is set up
     * by {@link SyncedShard}.
     */
    static void createShardTables(Connection c, String slot, String replicaVersion, List<String> publications)
            throws SQLException {
        StringBuilder pubs = new StringBuilder();
        for (String p : publications) {
            pubs.append(pubs.length() == 0 ? "" : ",").append('\'').append(p).append('\'');
        }
        exec(c, "CREATE SCHEMA IF NOT EXISTS zero_0",
                "CREATE TABLE IF NOT EXISTS zero_0.replicas (\"id\" TEXT PRIMARY KEY, \"rank\" BIGSERIAL,"
                        + " \"slot\" TEXT NOT NULL, \"version\" TEXT NOT NULL, \"initialSchema\" JSON,"
                        + " \"initialSyncContext\" JSON, \"subscriberContext\" JSON)",
                "CREATE TABLE IF NOT EXISTS zero_0.\"shardConfig\" (\"publications\" TEXT[] NOT NULL,"
                        + " \"ddlDetection\" BOOL NOT NULL, \"lock\" BOOL PRIMARY KEY DEFAULT true CHECK (lock))",
                "DELETE FROM zero_0.\"shardConfig\"",
                "INSERT INTO zero_0.\"shardConfig\" (publications, \"ddlDetection\") VALUES (ARRAY[" + pubs + "], true)",
                "INSERT INTO zero_0.replicas (id, slot, version, \"initialSyncContext\") VALUES ('" + slot + "', '"
                        + slot + "', '" + replicaVersion + "', '{}')");
    }

    /** A source whose initialisation reports the given replica (as the sync code would). */
    static PgChangeSource initializedSource(PgSourceSettings settings, String replicaVersion,
            List<String> publications) throws Exception {
        PgChangeSource s = new PgChangeSource(settings,
                reset -> new org.zrm.changesource.SubscriptionState(replicaVersion, publications, replicaVersion));
        s.initialize(false);
        return s;
    }

    static String confirmedFlush(Connection c, String slot) throws SQLException {
        return queryString(c, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
    }

    static long oid(Connection c, String table) throws SQLException {
        return Long.parseLong(queryString(c, "SELECT '" + table + "'::regclass::oid"));
    }

    /** Takes messages until {@code last} matches; fails after {@code timeout}. */
    static List<ChangeStreamMessage> takeUntil(ChangeStream stream, Predicate<ChangeStreamMessage> last,
            Duration timeout) throws Exception {
        List<ChangeStreamMessage> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                fail("timed out; got " + encode(out));
            }
            ChangeStreamMessage m = stream.poll(Duration.ofNanos(left));
            if (m == null) {
                continue;
            }
            out.add(m);
            if (last.test(m)) {
                return out;
            }
        }
    }

    /** Takes the next {@code n} transactions (begin … commit/rollback), skipping statuses; acks nothing. */
    static List<ChangeStreamMessage> takeTransactions(ChangeStream stream, int n, Duration timeout) throws Exception {
        List<ChangeStreamMessage> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            for (ChangeStreamMessage m : takeUntil(stream, SourceFixture::endsTransaction, timeout)) {
                if (!(m instanceof ChangeStreamMessage.StatusMessage)) {
                    out.add(m);
                }
            }
        }
        return out;
    }

    static boolean endsTransaction(ChangeStreamMessage m) {
        return m instanceof ChangeStreamMessage.CommitMessage || m instanceof ChangeStreamMessage.RollbackMessage;
    }

    /** Acks a commit the way the change streamer does after storing it. */
    static void ackCommit(ChangeStream stream, ChangeStreamMessage commit) {
        ChangeStreamMessage.CommitMessage c = (ChangeStreamMessage.CommitMessage) commit;
        stream.ack(new ChangeSourceUpstream(c.commit(), c.watermark()));
    }

    static List<String> encode(List<ChangeStreamMessage> messages) {
        List<String> out = new ArrayList<>();
        for (ChangeStreamMessage m : messages) {
            out.add(CODEC.encode(m));
        }
        return out;
    }

    static String relationJson(long oid, String schema, String name, String keys, String identity) {
        return "{\"tag\":\"relation\",\"relationOid\":" + oid + ",\"schema\":\"" + schema + "\",\"name\":\"" + name
                + "\",\"rowKey\":{\"columns\":[" + keys + "],\"type\":\"" + identity + "\"},\"keyColumns\":[" + keys
                + "],\"replicaIdentity\":\"" + identity + "\"}";
    }

    static <T> T notNull(T t) {
        assertNotNull(t);
        return t;
    }
}
