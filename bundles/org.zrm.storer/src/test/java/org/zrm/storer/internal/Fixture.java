package org.zrm.storer.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changesource.SubscriptionState;
import org.zrm.testing.PgDatabase;

/**
 * Upstream's storer fixture (app {@code xero}, replica version {@code 00}, transactions 03 and 06
 * of three rows each, lastWatermark 06), one fresh shard (schema) per test so tests in a class
 * share the class's database without interfering.
 */
final class Fixture {

    static final String REPLICA_VERSION = "00";
    static final String TASK = "task-id";
    private static final AtomicInteger SHARDS = new AtomicInteger();

    final PgDatabase db;
    final StorerSettings settings;
    final PgChangeLog log;
    final CdcSchema schema;

    private Fixture(PgDatabase db, StorerSettings settings) {
        this.db = db;
        this.settings = settings;
        this.log = new PgChangeLog(settings);
        this.schema = log.schema();
    }

    /** A migrated, configured shard with no rows besides the initial ones. */
    static Fixture empty(PgDatabase db, int batchSize) throws Exception {
        return empty(db, batchSize, StorerSettings.DEFAULT_INSERT_MODE);
    }

    static Fixture empty(PgDatabase db, int batchSize, StorerSettings.InsertMode mode) throws Exception {
        Fixture f = new Fixture(db, StorerSettings.of(db.uri(), "xero", SHARDS.incrementAndGet())
                .withChangeLogBatchSize(batchSize).withLockHolderTerminateMs(1000).withInsertMode(mode));
        f.log.ensureReplicationConfig(new SubscriptionState(REPLICA_VERSION, List.of(), REPLICA_VERSION), true);
        f.log.assumeOwnership(TASK, "change-streamer:12345");
        return f;
    }

    /** Upstream's fixture: 00 (initial rows), 03 and 06; lastWatermark 06; owned by {@value #TASK}. */
    static Fixture standard(PgDatabase db) throws Exception {
        return standard(db, StorerSettings.DEFAULT_BATCH_SIZE);
    }

    static Fixture standard(PgDatabase db, int batchSize) throws Exception {
        return standard(db, batchSize, StorerSettings.DEFAULT_INSERT_MODE);
    }

    static Fixture standard(PgDatabase db, int batchSize, StorerSettings.InsertMode mode) throws Exception {
        Fixture f = empty(db, batchSize, mode);
        f.store(begin("03", "{\"tag\":\"begin\",\"foo\":\"bar\"}"), data("03", 1, "{\"tag\":\"insert\"}"),
                commit("03", 2, "{\"tag\":\"commit\",\"bar\":\"baz\"}"));
        f.store(begin("06", "{\"tag\":\"begin\",\"boo\":\"dar\"}"), data("06", 1, "{\"tag\":\"update\"}"),
                commit("06", 2, "{\"tag\":\"commit\",\"boo\":\"far\"}"));
        return f;
    }

    void store(ChangeLogEntry... rows) throws ChangeLogException {
        try (ChangeLogTransaction tx = log.beginTransaction(TASK)) {
            for (ChangeLogEntry row : rows) {
                tx.append(row);
            }
            tx.commit();
        }
    }

    static ChangeLogEntry begin(String w) {
        return begin(w, "{\"tag\":\"begin\"}");
    }

    static ChangeLogEntry begin(String w, String json) {
        return new ChangeLogEntry(w, 0, "begin", json, null);
    }

    static ChangeLogEntry data(String w, long pos, String json) {
        return new ChangeLogEntry(w, pos, tagOf(json), json, null);
    }

    static ChangeLogEntry insert(String w, long pos, String id) {
        return data(w, pos, "{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\",\"name\":\"issues\","
                + "\"rowKey\":{\"columns\":[\"id\"]}},\"new\":{\"id\":\"" + id + "\"}}");
    }

    static ChangeLogEntry commit(String w, long pos) {
        return commit(w, pos, "{\"tag\":\"commit\"}");
    }

    static ChangeLogEntry commit(String w, long pos, String json) {
        return new ChangeLogEntry(w, pos, "commit", json, w);
    }

    /** A whole transaction: begin, n inserts, commit. */
    static ChangeLogEntry[] txn(String w, int inserts) {
        List<ChangeLogEntry> rows = new ArrayList<>();
        rows.add(begin(w));
        for (int i = 1; i <= inserts; i++) {
            rows.add(insert(w, i, w + "-" + i));
        }
        rows.add(commit(w, inserts + 1));
        return rows.toArray(ChangeLogEntry[]::new);
    }

    static String tagOf(String json) {
        int i = json.indexOf("\"tag\":\"") + 7;
        return json.substring(i, json.indexOf('"', i));
    }

    /** {@code watermark:pos:tag} of every row, in key order. */
    List<String> rows() throws SQLException {
        return strings("SELECT watermark || ':' || pos || ':' || (change->>'tag') FROM " + schema.table("changeLog")
                + " ORDER BY watermark, pos");
    }

    List<String> strings(String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    void exec(String sql, String... params) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setString(i + 1, params[i]);
            }
            ps.execute();
        }
    }

    void close() {
        log.close();
    }
}
