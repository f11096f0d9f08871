import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupFrames;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.ReplicationState;
import org.zrm.changelog.StreamStartParameters;
import org.zrm.changelog.WrongReplicaVersionException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.Begin;
import org.zrm.protocol.Change;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.Insert;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.watermark.Watermarks;

/**
 * Change-DB compatibility between ZRM's storer and the real zero-cache 1.8.0, both ways.
 *
 * <p>Run through {@code zero-cache-change-db.sh}, which builds the class path, provides Node 22
 * and zero-cache and compiles this file with {@code CompatSupport.java} (inputs, steps, the
 * zero-cache process, the subscriber); see {@code README.md} next to this file. Prints one
 * {@code COMPAT <check> ok} or {@code COMPAT <check> FAIL <why>} line per check and exits 1 if any
 * failed.
 */
public final class ZeroCacheChangeDbCheck extends CompatSupport {

    private static final String CDC = APP + "_" + SHARD_NUM + "/cdc";
    private static final String UPSTREAM_DB = "upstream";
    private static final String CATALOG_DB = "zrmcatalog";
    private static final String ZRM_TASK = "zrm-compat-task";
    private static final String ZRM_ADDRESS = "127.0.0.1:24849";

    // Facts gathered by one step and checked by later ones.
    private String replicaVersion;
    private List<String> publications;
    private String zeroLastWatermark;
    private String zeroTask1;
    private List<ChangeLogEntry> zeroRows;
    private List<ChangeLogEntry> zrmRows;
    private List<String> zrmLiveMessages;
    private String zrmWatermark;
    private String zeroTask2;

    public static void main(String[] args) throws Exception {
        new ZeroCacheChangeDbCheck().runAndExit();
    }

    // ------------------------------------------------------------------ scenario

    @Override
    void checks() throws Exception {
        cluster.createDatabaseIfMissing(UPSTREAM_DB);
        cluster.createDatabaseIfMissing(CATALOG_DB);
        upstream("CREATE TABLE items (id int8 PRIMARY KEY, name text, qty int4)",
                "INSERT INTO items VALUES (1, 'a', 1), (2, 'b', 2)");

        boolean zeroWrote = step("zero-cache/stores-upstream-writes", this::zeroCacheWrites);
        boolean zrmRead = zeroWrote
                && step("zero-to-zrm/migrate-accepts-v6", this::zrmMigratesNothing)
                && step("zero-to-zrm/state", this::zrmReadsState)
                && step("zero-to-zrm/catchup-frames", this::zrmCatchesUp)
                && step("zero-to-zrm/codec-roundtrip", this::zrmCodecRoundTrip);
        boolean zrmWrote = zrmRead && step("zero-to-zrm/takeover-and-store", this::zrmTakesOverAndStores)
                && step("zero-to-zrm/purge", this::zrmPurges);
        skipUnless(zeroWrote, "zero-to-zrm/*");
        if (zrmWrote) {
            ZeroCache zero = zeroCache("run2-after-zrm", Map.of());
            boolean started = false;
            try {
                started = step("zrm-to-zero/restart-resumes-after-zrm", () -> zeroResumes(zero));
                if (started) {
                    step("zrm-to-zero/takes-ownership-back", this::zeroTakesOwnershipBack);
                    step("zrm-to-zero/serves-zrm-rows", this::zeroServesZrmRows);
                }
            } finally {
                if (step("zrm-to-zero/stops", zero::stop) && started) {
                    step("zrm-to-zero/log-clean", () -> zeroLogClean(zero));
                }
            }
        }
        skipUnless(zrmWrote, "zrm-to-zero/*");
        step("catalog/pg_dump-identical", this::catalogIdentical);
        step("zrm-schema-to-zero/runs-without-migration", this::zeroRunsOnZrmSchema);
    }

    private void skipUnless(boolean ran, String what) {
        if (!ran) {
            System.out.println("COMPAT-INFO later " + what + " checks skipped: an earlier check failed");
        }
    }

    /** zero-cache replicates inserts, updates, deletes and a multi-row transaction into its change log. */
    private void zeroCacheWrites() throws Exception {
        ZeroCache zero = zeroCache("run1-initial", Map.of());
        try {
            zero.start();
            zeroTask1 = zero.taskID();
            upstream("INSERT INTO items VALUES (3, 'c', 3)");
            upstream("UPDATE items SET qty = 10 WHERE id = 1");
            upstream("DELETE FROM items WHERE id = 2");
            upstreamTx("INSERT INTO items VALUES (4, 'd', 4), (5, 'e', 5)", "UPDATE items SET name = 'z' WHERE id = 3",
                    "DELETE FROM items WHERE id = 4");
            replicaVersion = scalar("SELECT \"replicaVersion\" FROM " + t("replicationConfig"));
            awaitCommits(4, replicaVersion);
        } finally {
            zero.stop();
        }
        assertClean(zero, false);
        replicaVersion = scalar("SELECT \"replicaVersion\" FROM " + t("replicationConfig"));
        publications = strings("SELECT unnest(publications) FROM " + t("replicationConfig") + " ORDER BY 1");
        zeroLastWatermark = scalar("SELECT \"lastWatermark\" FROM " + t("replicationState"));
        zeroRows = rawRows(UPSTREAM_DB);
        System.out.println("COMPAT-INFO zero-cache wrote " + zeroRows.size() + " rows; replicaVersion=" + replicaVersion
                + " lastWatermark=" + zeroLastWatermark + " publications=" + publications + " task=" + zeroTask1);
        expect(zeroRows.size() == 2 + 3 * 3 + 6, "expected 17 change-log rows (2 initial, 3 single-change and one"
                + " 4-change transaction), got "
                + zeroRows.size());
    }

    /** ZRM's migrator finds v6 and changes nothing (catalog and version row identical). */
    private void zrmMigratesNothing() throws Exception {
        String before = normalizedDump(UPSTREAM_DB);
        List<String> versionsBefore = strings(versionRowSql());
        try (PgChangeLog log = zrmLog(UPSTREAM_DB)) {
            log.initialize();
        }
        String after = normalizedDump(UPSTREAM_DB);
        expect(before.equals(after), "ZRM's migration changed zero-cache's schema:\n" + diff(before, after));
        expect(versionsBefore.equals(strings(versionRowSql())), "versionHistory changed: " + versionsBefore + " -> "
                + strings(versionRowSql()));
        expect(versionsBefore.equals(List.of("6,6,1")), "zero-cache's versionHistory is " + versionsBefore);
    }

    /** replicationState, changeLogState, streamStartParameters and ensureReplicationConfig read zero's rows. */
    private void zrmReadsState() throws Exception {
        try (PgChangeLog log = zrmLog(UPSTREAM_DB)) {
            ReplicationState rs = log.replicationState();
            expect(rs.lastWatermark().equals(zeroLastWatermark), "lastWatermark " + rs.lastWatermark());
            expect(zeroTask1.equals(rs.owner()), "owner " + rs.owner() + ", zero-cache's task is " + zeroTask1);
            expect(("127.0.0.1:" + (zeroPort + 1)).equals(rs.ownerAddress()), "ownerAddress " + rs.ownerAddress());
            expect(log.discoverOwnerAddress().equals(Optional.of("127.0.0.1:" + (zeroPort + 1))), "discovered address");
            ChangeLogState cs = log.changeLogState();
            expect(cs.replicaVersion().equals(replicaVersion) && cs.minWatermark().equals(replicaVersion),
                    "changeLogState " + cs);
            StreamStartParameters sp = log.streamStartParameters();
            expect(sp.lastWatermark().equals(zeroLastWatermark) && sp.backfillRequests().isEmpty(),
                    "streamStartParameters " + sp);
            // The replica zero-cache synced (same version and publications) must not trigger a reset.
            log.ensureReplicationConfig(new SubscriptionState(replicaVersion, publications, zeroLastWatermark), false);
            expect(rawRows(UPSTREAM_DB).equals(zeroRows), "ensureReplicationConfig changed the change log");
        }
    }

    /** Catch-up from the replica version returns zero's rows; their rebuilt frames decode. */
    private void zrmCatchesUp() throws Exception {
        List<ChangeLogEntry> got = new ArrayList<>();
        try (PgChangeLog log = zrmLog(UPSTREAM_DB); CatchupSnapshot snap = log.openCatchupSnapshot()) {
            expect(snap.lastWatermark().equals(zeroLastWatermark), "snapshot lastWatermark " + snap.lastWatermark());
            try {
                snap.catchup("not-" + replicaVersion, replicaVersion).close();
                throw new CheckFailed("catch-up with a wrong replica version was accepted");
            } catch (WrongReplicaVersionException expected) {
                // the typed reset signal
            }
            try (CatchupCursor cursor = snap.catchup(replicaVersion, replicaVersion)) {
                for (List<ChangeLogEntry> batch = cursor.nextBatch(); !batch.isEmpty(); batch = cursor.nextBatch()) {
                    got.addAll(batch);
                }
                expect(cursor.foundStart(), "catch-up from the replica version did not find its start");
            }
        }
        List<ChangeLogEntry> expected = new ArrayList<>();
        for (ChangeLogEntry e : zeroRows) {
            if (Watermarks.isAfter(e.watermark(), replicaVersion)) {
                expected.add(new ChangeLogEntry(e.watermark(), e.pos(), e.tag(), e.change(), null));
            }
        }
        expect(got.equals(expected), "catch-up rows differ from zero-cache's rows:\n got " + got + "\nwant " + expected);
        for (ChangeLogEntry e : got) {
            String frame = CatchupFrames.rebuild(e);
            ChangeStreamMessage m = codec.decodeChangeStreamMessage(frame);
            expect(codec.encode(m).equals(frame), "frame does not re-encode byte-identically: " + frame);
            expect(CatchupFrames.extractChange(frame, e.tag()).equals(e.change()), "extractChange of " + frame);
        }
    }

    /** Every change zero-cache stored decodes and re-encodes byte-identically; watermarks match LSNs. */
    private void zrmCodecRoundTrip() {
        for (ChangeLogEntry e : zeroRows) {
            Change c = codec.decodeChange(e.change());
            String again = codec.encodeChange(c);
            expect(again.equals(e.change()), "change re-encodes differently:\n zero " + e.change() + "\n  zrm " + again);
            expect(c.tag().equals(e.tag()), "tag " + c.tag() + " vs " + e.tag());
            if (!e.watermark().equals(replicaVersion) && (e.tag().equals("begin") || e.tag().equals("commit"))) {
                String lsn = (String) ((e.tag().equals("begin") ? ((Begin) c).extra() : ((Commit) c).extra())
                        .get("commitLsn"));
                expect(Watermarks.fromLsn(lsn).equals(e.watermark()),
                        "watermark " + e.watermark() + " is not Watermarks.fromLsn(" + lsn + ")");
            }
            if (e.tag().equals("commit")) {
                expect(e.watermark().equals(e.precommit()) || e.watermark().equals(replicaVersion),
                        "commit row precommit " + e.precommit());
            }
        }
    }

    /**
     * With zero-cache stopped, an upstream transaction commits; ZRM takes ownership and stores that
     * transaction exactly as zero-cache's change source would have produced it (begin/commit
     * metadata read from the slot with pgoutput), at its commit watermark. zero-cache then resumes
     * the slot after it, so the log stays consistent with upstream.
     */
    private void zrmTakesOverAndStores() throws Exception {
        long xid;
        try (Connection c = cluster.connect(UPSTREAM_DB)) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery("SELECT txid_current() % 4294967296")) {
                    rs.next();
                    xid = rs.getLong(1);
                }
                s.execute("INSERT INTO items VALUES (100, 'zrm', 100)");
            }
            c.commit();
        }
        PgTx tx = peekTransaction(xid);
        zrmWatermark = Watermarks.fromLsn(tx.commitLsn());
        expect(Watermarks.isAfter(zrmWatermark, zeroLastWatermark), "upstream commit " + zrmWatermark
                + " is not after zero-cache's " + zeroLastWatermark);

        // Templates: zero-cache's own rows for the same table, so only the values differ.
        Begin beginT = (Begin) codec.decodeChange(firstChange("begin"));
        Insert insertT = (Insert) codec.decodeChange(firstChange("insert"));
        Commit commitT = (Commit) codec.decodeChange(firstChange("commit"));
        Begin begin = new Begin(beginT.json(), beginT.skipAck(), beginT.extra()
                .with("commitLsn", tx.commitLsn()).with("commitTime", tx.commitTimeMicros()).with("xid", xid));
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", 100L);
        row.put("name", "zrm");
        row.put("qty", 100L);
        Insert insert = new Insert(insertT.relation(), row, insertT.extra());
        Commit commit = new Commit(commitT.extra().with("flags", (long) tx.flags()).with("commitLsn", tx.commitLsn())
                .with("commitEndLsn", tx.commitEndLsn()).with("commitTime", tx.commitTimeMicros()));
        zrmLiveMessages = List.of(
                codec.encode(new ChangeStreamMessage.BeginMessage(begin, zrmWatermark)),
                codec.encode(new ChangeStreamMessage.DataMessage(insert)),
                codec.encode(new ChangeStreamMessage.CommitMessage(commit, zrmWatermark)));
        zrmRows = List.of(
                new ChangeLogEntry(zrmWatermark, 0, "begin", CatchupFrames.extractChange(zrmLiveMessages.get(0), "begin"),
                        null),
                new ChangeLogEntry(zrmWatermark, 1, "insert",
                        CatchupFrames.extractChange(zrmLiveMessages.get(1), "insert"), null),
                new ChangeLogEntry(zrmWatermark, 2, "commit",
                        CatchupFrames.extractChange(zrmLiveMessages.get(2), "commit"), zrmWatermark));
        System.out.println("COMPAT-INFO ZRM stores upstream xid " + xid + " at " + zrmWatermark + ": "
                + zrmLiveMessages);

        try (PgChangeLog log = zrmLog(UPSTREAM_DB)) {
            log.assumeOwnership(ZRM_TASK, ZRM_ADDRESS);
            ReplicationState rs = log.replicationState();
            expect(ZRM_TASK.equals(rs.owner()) && ZRM_ADDRESS.equals(rs.ownerAddress()), "after takeover " + rs);
            try (ChangeLogTransaction w = log.beginTransaction(ZRM_TASK)) {
                for (ChangeLogEntry e : zrmRows) {
                    w.append(e);
                }
                w.commit();
            }
            expect(log.replicationState().lastWatermark().equals(zrmWatermark), "lastWatermark after store "
                    + log.replicationState());
        }
        List<ChangeLogEntry> stored = rawRows(UPSTREAM_DB).stream()
                .filter(e -> e.watermark().equals(zrmWatermark)).toList();
        expect(stored.equals(zrmRows), "stored rows differ:\n got " + stored + "\nwant " + zrmRows);
    }

    /** ZRM purges below zero-cache's last watermark: older rows go; zero's last and ZRM's transaction stay. */
    private void zrmPurges() throws Exception {
        try (PgChangeLog log = zrmLog(UPSTREAM_DB)) {
            long deleted = log.purgeBefore(zeroLastWatermark, ZRM_TASK);
            long older = zeroRows.stream().filter(e -> Watermarks.compare(e.watermark(), zeroLastWatermark) < 0).count();
            expect(deleted == older, "purged " + deleted + " rows, expected " + older);
            expect(log.changeLogState().minWatermark().equals(zeroLastWatermark), "min watermark after purge "
                    + log.changeLogState());
        }
        List<String> left = strings("SELECT DISTINCT watermark FROM " + t("changeLog") + " ORDER BY 1");
        expect(left.equals(List.of(zeroLastWatermark, zrmWatermark)), "after the purge the log holds " + left);
    }

    /**
     * zero-cache restarts on the change DB ZRM wrote: it checks the v6 schema (no migration), keeps
     * its replica (no reset) and resumes the upstream slot right after ZRM's transaction.
     */
    private void zeroResumes(ZeroCache zero) throws Exception {
        zero.start();
        zeroTask2 = zero.taskID();
        expect(zero.log().contains("started replication stream@") && zero.log().contains(" from " + zrmWatermark
                + " (replicaVersion: " + replicaVersion + ")"), "zero-cache did not resume from ZRM's watermark "
                + zrmWatermark + "; see " + zero.logFile);
        expect(!zero.log().contains("Created replication slot") && !zero.log().contains("Copying "),
                "zero-cache re-synced its replica instead of resuming");
    }

    /** zero-cache assumes ownership; ZRM, the previous owner, can no longer commit. */
    private void zeroTakesOwnershipBack() throws Exception {
        try (PgChangeLog log = zrmLog(UPSTREAM_DB)) {
            awaitTrue(() -> zeroTask2.equals(query(() -> log.replicationState().owner())), "zero-cache taking ownership");
            expect(("127.0.0.1:" + (zeroPort + 1)).equals(log.replicationState().ownerAddress()), "owner address "
                    + log.replicationState());
            try (ChangeLogTransaction w = log.beginTransaction(ZRM_TASK)) {
                w.commit();
                throw new CheckFailed("ZRM committed although zero-cache owns the log");
            } catch (OwnershipLostException expected) {
                // the loser of the takeover stores nothing
            }
        }
    }

    /**
     * A subscriber at zero-cache's last own watermark is caught up with ZRM's transaction,
     * byte-identical to ZRM's live and rebuilt frames; zero-cache then appends the next upstream
     * transaction after ZRM's (the one ZRM stored is not replayed) and streams it live.
     */
    private void zeroServesZrmRows() throws Exception {
        try (Subscriber sub = Subscriber.open(zeroPort + 1, replicaVersion, zeroLastWatermark)) {
            List<String> caught = sub.untilCommit(zrmWatermark);
            List<String> want = new ArrayList<>();
            for (ChangeLogEntry e : zrmRows) {
                want.add(CatchupFrames.rebuild(e));
            }
            expect(want.equals(zrmLiveMessages), "ZRM's rebuilt frames differ from its live messages");
            expect(caught.equals(want), "zero-cache served ZRM's transaction differently:\n got " + caught
                    + "\nwant " + want);
            System.out.println("COMPAT-INFO subscriber at " + zeroLastWatermark + " got " + sub.received()
                    + " frames; ZRM's transaction byte-identical: " + caught.size() + " messages");

            upstream("INSERT INTO items VALUES (101, 'after', 101)");
            awaitCommits(2, zeroLastWatermark); // ZRM's and the new one
            List<ChangeLogEntry> rows = rawRows(UPSTREAM_DB);
            String next = rows.get(rows.size() - 1).watermark();
            expect(Watermarks.isAfter(next, zrmWatermark), "next transaction " + next + " not after " + zrmWatermark);
            long copies = rows.stream().filter(e -> e.change().contains("\"id\":100,")).count();
            expect(copies == 1, "upstream transaction stored by ZRM appears " + copies + " times");
            List<String> live = sub.untilCommit(next);
            List<String> wantLive = rows.stream().filter(e -> e.watermark().equals(next))
                    .map(e -> CatchupFrames.rebuild(new ChangeLogEntry(e.watermark(), e.pos(), e.tag(), e.change(),
                            null)))
                    .toList();
            expect(live.equals(wantLive), "live frames differ from ZRM's rebuild of zero's rows:\n got " + live
                    + "\nwant " + wantLive);
            System.out.println("COMPAT-INFO zero-cache stored the next upstream transaction at " + next
                    + " and streamed it live: " + live.size() + " messages");
        }
    }

    private void zeroLogClean(ZeroCache zero) {
        assertClean(zero, true);
        System.out.println("COMPAT-INFO zero-cache run 2 change-db schema log: " + zero.linesMatching("zero_0/cdc", 200));
    }

    /** pg_dump of the cdc schema zero-cache created vs the one ZRM's migrator creates on an empty DB. */
    private void catalogIdentical() throws Exception {
        try (PgChangeLog log = zrmLog(CATALOG_DB)) {
            log.initialize();
        }
        String zero = normalizedDump(UPSTREAM_DB);
        String zrm = normalizedDump(CATALOG_DB);
        Files.writeString(work.resolve("cdc-zero-cache.sql"), zero);
        Files.writeString(work.resolve("cdc-zrm.sql"), zrm);
        System.out.println("COMPAT-INFO normalized dumps: " + work.resolve("cdc-zero-cache.sql") + ", "
                + work.resolve("cdc-zrm.sql") + " (" + zero.lines().count() + " lines)");
        // The one documented difference (docs/COMPATIBILITY.md): ZRM stores the change column with
        // lz4 where the server has it. A storage attribute, not schema; anything else must match.
        String lz4 = "ALTER TABLE ONLY \"zero_0/cdc\".\"changeLog\" ALTER COLUMN change SET COMPRESSION lz4;";
        boolean lz4Line = zrm.lines().anyMatch(lz4::equals);
        System.out.println("COMPAT-INFO ZRM's change column compression: " + (lz4Line ? "lz4 (documented difference)"
                : "the server's default"));
        String d = diff(zero, zrm.lines().filter(l -> !l.equals(lz4)).collect(java.util.stream.Collectors.joining("\n",
                "", zrm.endsWith("\n") ? "\n" : "")));
        System.out.println("COMPAT-INFO catalog diff (- zero-cache, + ZRM): " + (d.isEmpty() ? "none" : "\n" + d));
        expect(d.isEmpty(), "catalogs differ");
        List<String> zv = strings(versionRowSql());
        List<String> rv = strings(CATALOG_DB, versionRowSql());
        expect(zv.equals(rv), "versionHistory zero-cache " + zv + " vs ZRM " + rv);
    }

    /** zero-cache runs on a change DB whose schema ZRM created: it checks v6, migrates nothing, and stores. */
    private void zeroRunsOnZrmSchema() throws Exception {
        String before = normalizedDump(CATALOG_DB);
        expect(!before.isEmpty(), "ZRM's schema is missing in " + CATALOG_DB);
        ZeroCache zero = zeroCache("run3-zrm-schema", Map.of("ZERO_CHANGE_DB", cluster.uri(CATALOG_DB)));
        try {
            zero.start();
            upstream("INSERT INTO items VALUES (102, 'on-zrm-schema', 102)");
            awaitTrue(() -> query(() -> strings(CATALOG_DB, "SELECT 1 FROM " + t("changeLog")
                    + " WHERE change->>'tag' = 'insert' AND change->'new'->>'id' = '102'").size() == 1),
                    "zero-cache storing into ZRM's schema");
        } finally {
            zero.stop();
        }
        assertClean(zero, true);
        expect(before.equals(normalizedDump(CATALOG_DB)), "zero-cache changed ZRM's schema");
        expect(strings(CATALOG_DB, versionRowSql()).equals(List.of("6,6,1")), "versionHistory after zero-cache "
                + strings(CATALOG_DB, versionRowSql()));
    }

    // ------------------------------------------------------------------ helpers: ZRM and Postgres

    private PgChangeLog zrmLog(String db) {
        return new PgChangeLog(StorerSettings.of(cluster.uri(db), APP, SHARD_NUM));
    }

    private static String t(String table) {
        return "\"" + CDC + "\".\"" + table + "\"";
    }

    private static String versionRowSql() {
        return "SELECT concat_ws(',', \"dataVersion\", \"schemaVersion\", \"minSafeVersion\") FROM " + t("versionHistory");
    }

    private String firstChange(String tag) {
        return zeroRows.stream().filter(e -> e.tag().equals(tag) && !e.watermark().equals(replicaVersion))
                .findFirst().orElseThrow(() -> new CheckFailed("zero-cache stored no " + tag + " row")).change();
    }

    private void upstream(String... sqls) throws SQLException {
        exec(UPSTREAM_DB, sqls);
    }

    private void upstreamTx(String... sqls) throws SQLException {
        try (Connection c = cluster.connect(UPSTREAM_DB)) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                for (String sql : sqls) {
                    s.execute(sql);
                }
            }
            c.commit();
        }
    }

    private String scalar(String sql) throws SQLException {
        return scalar(UPSTREAM_DB, sql);
    }

    private List<String> strings(String sql) throws SQLException {
        return strings(UPSTREAM_DB, sql);
    }

    /** Every change-log row as stored, read with plain SQL (independent of ZRM's reader). */
    private List<ChangeLogEntry> rawRows(String db) throws SQLException {
        List<ChangeLogEntry> out = new ArrayList<>();
        try (Connection c = cluster.connect(db); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT watermark, pos, change->>'tag', change::text, precommit FROM " + t("changeLog")
                        + " ORDER BY watermark, pos")) {
            while (rs.next()) {
                out.add(new ChangeLogEntry(rs.getString(1), rs.getLong(2), rs.getString(3), rs.getString(4),
                        rs.getString(5)));
            }
        }
        return out;
    }

    /** Waits until at least {@code n} transactions after {@code after} are committed in the change log. */
    private void awaitCommits(int n, String after) throws Exception {
        awaitTrue(() -> query(() -> strings("SELECT count(*) FROM " + t("changeLog")
                + " WHERE change->>'tag' = 'commit' AND watermark > '" + after + "'")).get(0).equals(
                        String.valueOf(n)), n + " committed transactions after " + after + " in the change log");
    }

    private record PgTx(String commitLsn, String commitEndLsn, long commitTimeMicros, int flags) {
    }

    /**
     * Reads one transaction's begin/commit metadata from zero-cache's (inactive) slot without
     * consuming it, decoding pgoutput's Begin ('B') and Commit ('C') messages.
     */
    private PgTx peekTransaction(long xid) throws SQLException {
        String slot = scalar("SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE '" + APP + "\\_" + SHARD_NUM
                + "\\_%' AND NOT active ORDER BY slot_name LIMIT 1");
        expect(slot != null, "no inactive zero-cache replication slot");
        String pubs = String.join(",", publications);
        boolean mine = false;
        try (Connection c = cluster.connect(UPSTREAM_DB); PreparedStatement ps = c.prepareStatement(
                "SELECT data FROM pg_logical_slot_peek_binary_changes(?, NULL, NULL, 'proto_version', '1',"
                        + " 'publication_names', ?)")) {
            ps.setString(1, slot);
            ps.setString(2, pubs);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ByteBuffer b = ByteBuffer.wrap(rs.getBytes(1));
                    byte type = b.get();
                    if (type == 'B') {
                        b.getLong(); // final LSN, repeated in Commit
                        b.getLong(); // commit time, repeated in Commit
                        mine = Integer.toUnsignedLong(b.getInt()) == xid;
                    } else if (type == 'C' && mine) {
                        int flags = b.get();
                        long commitLsn = b.getLong();
                        long endLsn = b.getLong();
                        long pgMicros = b.getLong();
                        // PostgreSQL counts from 2000-01-01; zero-cache reports Unix-epoch microseconds.
                        return new PgTx(lsnText(commitLsn), lsnText(endLsn), pgMicros + 946_684_800_000_000L, flags);
                    }
                }
            }
        }
        throw new CheckFailed("transaction xid " + xid + " not found in slot " + slot);
    }

    /** zero-cache's LSN text: two zero-padded upper-case 8-digit hex halves. */
    private static String lsnText(long lsn) {
        return String.format("%08X/%08X", lsn >>> 32, lsn & 0xFFFFFFFFL);
    }

    private String normalizedDump(String db) throws IOException, InterruptedException {
        return normalizedSchemaDump(db, "-n", "\"" + CDC + "\"");
    }

    /**
     * Fails on error-level lines, change-db migrations or resets, and unless zero-cache reported
     * change-streamer schema v6.
     *
     * @param existingSchema whether the cdc schema existed before this run (then zero-cache must
     *     only check it, never migrate it)
     */
    private static void assertClean(ZeroCache zero, boolean existingSchema) {
        // A replication manager that finds a non-empty change log tries a litestream restore of
        // its replica first; this setup has no litestream, so the attempt fails and it keeps the
        // local replica file (checked by the callers). Not a change-db matter.
        String litestreamMissing = "Missing --litestream-executable";
        zero.assertNoLogLines(line -> !line.contains(litestreamMissing) && (commonProblem(line)
                || existingSchema && line.contains("\"initSchema\":\"" + CDC + "\"") && line.contains("Migrating schema")));
        long litestream = zero.log().lines().filter(line -> line.contains(litestreamMissing)).count();
        if (litestream > 0) {
            System.out.println("COMPAT-INFO zero-cache " + zero.label + ": " + litestream + " log lines about the"
                    + " skipped litestream restore (no litestream here; the local replica file is kept)");
        }
        expect(zero.log().contains("Running change-streamer at schema v6"), "zero-cache " + zero.label
                + " did not report change-streamer schema v6");
    }

    /** A run of zero-cache's replication manager on the upstream database, replica file {@code replica.db}. */
    private ZeroCache zeroCache(String label, Map<String, String> extraEnv) {
        return new ZeroCache(label, UPSTREAM_DB, work.resolve("replica.db"), extraEnv);
    }
}
