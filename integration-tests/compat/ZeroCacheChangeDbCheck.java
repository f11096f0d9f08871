import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.Begin;
import org.zrm.protocol.Change;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.Insert;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Frame;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.watermark.Watermarks;

/**
 * Change-DB compatibility between ZRM's storer and the real zero-cache 1.8.0, both ways.
 *
 * <p>Run through {@code zero-cache-change-db.sh}, which builds the class path and provides Node 22
 * and zero-cache; see {@code README.md} next to this file. Prints one {@code COMPAT <check> ok} or
 * {@code COMPAT <check> FAIL <why>} line per check and exits 1 if any failed.
 *
 * <p>Inputs (system properties): {@code zero.dir} (folder holding {@code node_modules/@rocicorp/zero}),
 * {@code node.bin} (folder holding Node 22's {@code node}), {@code work.dir} (scratch folder for
 * logs, dumps and the replica file), {@code zero.port} (zero-cache's {@code ZERO_PORT}; its
 * change-streamer listens on the next port).
 */
public final class ZeroCacheChangeDbCheck {

    private static final String APP = "zero";
    private static final int SHARD = 0;
    private static final String CDC = APP + "_" + SHARD + "/cdc";
    private static final String UPSTREAM_DB = "upstream";
    private static final String CATALOG_DB = "zrmcatalog";
    private static final String ZRM_TASK = "zrm-compat-task";
    private static final String ZRM_ADDRESS = "127.0.0.1:24849";
    private static final Duration WAIT = Duration.ofSeconds(90);

    private final Path zeroDir;
    private final Path nodeBin;
    private final Path work;
    private final int zeroPort;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final List<String> failures = new ArrayList<>();
    private PgCluster cluster;

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

    private ZeroCacheChangeDbCheck(Path zeroDir, Path nodeBin, Path work, int zeroPort) {
        this.zeroDir = zeroDir;
        this.nodeBin = nodeBin;
        this.work = work;
        this.zeroPort = zeroPort;
    }

    public static void main(String[] args) throws Exception {
        ZeroCacheChangeDbCheck check = new ZeroCacheChangeDbCheck(
                Path.of(required("zero.dir")), Path.of(required("node.bin")), Path.of(required("work.dir")),
                Integer.parseInt(System.getProperty("zero.port", "14848")));
        int failed = check.run();
        System.out.println(failed == 0 ? "COMPAT all ok" : "COMPAT " + failed + " check(s) FAILED");
        System.exit(failed == 0 ? 0 : 1);
    }

    private static String required(String name) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("system property " + name + " is required");
        }
        return v;
    }

    // ------------------------------------------------------------------ scenario

    private int run() throws Exception {
        Files.createDirectories(work);
        try (PgCluster pg = PgCluster.builder().start()) {
            cluster = pg;
            System.out.println("COMPAT-INFO postgres on 127.0.0.1:" + pg.port() + ", work dir " + work);
            pg.createDatabaseIfMissing(UPSTREAM_DB);
            pg.createDatabaseIfMissing(CATALOG_DB);
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
                ZeroCache zero = new ZeroCache("run2-after-zrm", Map.of());
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
            if (!failures.isEmpty()) {
                System.out.println("COMPAT-INFO zero-cache and ZRM logs are in " + work);
            }
        }
        return failures.size();
    }

    private void skipUnless(boolean ran, String what) {
        if (!ran) {
            System.out.println("COMPAT-INFO later " + what + " checks skipped: an earlier check failed");
        }
    }

    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    private boolean step(String name, Body body) {
        long start = System.nanoTime();
        try {
            body.run();
            System.out.printf("COMPAT %s ok (%d ms)%n", name, (System.nanoTime() - start) / 1_000_000);
            return true;
        } catch (Throwable t) {
            String why = t instanceof CheckFailed ? t.getMessage() : t.toString();
            System.out.println("COMPAT " + name + " FAIL " + why.replace('\n', ' '));
            if (!(t instanceof CheckFailed)) {
                t.printStackTrace(System.out);
            }
            failures.add(name);
            return false;
        }
    }

    /** zero-cache replicates inserts, updates, deletes and a multi-row transaction into its change log. */
    private void zeroCacheWrites() throws Exception {
        ZeroCache zero = new ZeroCache("run1-initial", Map.of());
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
        zero.assertClean(false);
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
        zero.assertClean(true);
        System.out.println("COMPAT-INFO zero-cache run 2 change-db schema log: " + zero.linesMatching("zero_0/cdc"));
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
        String d = diff(zero, zrm);
        System.out.println("COMPAT-INFO catalog diff (- zero-cache, + ZRM): " + (d.isEmpty() ? "none" : "\n" + d));
        expect(d.isEmpty(), "catalogs differ");
        List<String> zv = strings(versionRowSql());
        List<String> rv = stringsIn(CATALOG_DB, versionRowSql());
        expect(zv.equals(rv), "versionHistory zero-cache " + zv + " vs ZRM " + rv);
    }

    /** zero-cache runs on a change DB whose schema ZRM created: it checks v6, migrates nothing, and stores. */
    private void zeroRunsOnZrmSchema() throws Exception {
        String before = normalizedDump(CATALOG_DB);
        expect(!before.isEmpty(), "ZRM's schema is missing in " + CATALOG_DB);
        ZeroCache zero = new ZeroCache("run3-zrm-schema", Map.of("ZERO_CHANGE_DB", cluster.uri(CATALOG_DB)));
        try {
            zero.start();
            upstream("INSERT INTO items VALUES (102, 'on-zrm-schema', 102)");
            awaitTrue(() -> query(() -> stringsIn(CATALOG_DB, "SELECT 1 FROM " + t("changeLog")
                    + " WHERE change->>'tag' = 'insert' AND change->'new'->>'id' = '102'").size() == 1),
                    "zero-cache storing into ZRM's schema");
        } finally {
            zero.stop();
        }
        zero.assertClean(true);
        expect(before.equals(normalizedDump(CATALOG_DB)), "zero-cache changed ZRM's schema");
        expect(stringsIn(CATALOG_DB, versionRowSql()).equals(List.of("6,6,1")), "versionHistory after zero-cache "
                + stringsIn(CATALOG_DB, versionRowSql()));
    }

    // ------------------------------------------------------------------ helpers: ZRM and Postgres

    private PgChangeLog zrmLog(String db) {
        return new PgChangeLog(StorerSettings.of(cluster.uri(db), APP, SHARD));
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
        try (Connection c = cluster.connect(UPSTREAM_DB); Statement s = c.createStatement()) {
            for (String sql : sqls) {
                s.execute(sql);
            }
        }
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
        List<String> v = strings(sql);
        return v.isEmpty() ? null : v.get(0);
    }

    private List<String> strings(String sql) throws SQLException {
        return stringsIn(UPSTREAM_DB, sql);
    }

    private List<String> stringsIn(String db, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = cluster.connect(db); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
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
        String slot = scalar("SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE '" + APP + "\\_" + SHARD
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
        Path bin = Path.of(System.getProperty("pg.bin", "/usr/lib/postgresql/15/bin"));
        Process p = new ProcessBuilder(bin.resolve("pg_dump").toString(), "-h", "127.0.0.1", "-p",
                String.valueOf(cluster.port()), "-U", "postgres", "--schema-only", "--no-owner", "--no-privileges",
                "-n", "\"" + CDC + "\"", db).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new CheckFailed("pg_dump " + db + " failed: " + out);
        }
        StringBuilder sb = new StringBuilder();
        for (String line : out.split("\n")) {
            // Comments, session settings and pg_dump's per-run \restrict key are not catalog content.
            if (line.isBlank() || line.startsWith("--") || line.startsWith("SET ") || line.startsWith("\\restrict")
                    || line.startsWith("\\unrestrict") || line.startsWith("SELECT pg_catalog.set_config")) {
                continue;
            }
            sb.append(line).append('\n');
        }
        return sb.toString();
    }

    /** A minimal line diff (LCS), {@code -} for lines only in {@code a}, {@code +} for lines only in {@code b}. */
    static String diff(String a, String b) {
        String[] x = a.split("\n");
        String[] y = b.split("\n");
        int[][] l = new int[x.length + 1][y.length + 1];
        for (int i = x.length - 1; i >= 0; i--) {
            for (int j = y.length - 1; j >= 0; j--) {
                l[i][j] = x[i].equals(y[j]) ? l[i + 1][j + 1] + 1 : Math.max(l[i + 1][j], l[i][j + 1]);
            }
        }
        StringBuilder out = new StringBuilder();
        int i = 0;
        int j = 0;
        while (i < x.length || j < y.length) {
            if (i < x.length && j < y.length && x[i].equals(y[j])) {
                i++;
                j++;
            } else if (j < y.length && (i == x.length || l[i][j + 1] >= l[i + 1][j])) {
                out.append("+ ").append(y[j++]).append('\n');
            } else {
                out.append("- ").append(x[i++]).append('\n');
            }
        }
        return out.toString();
    }

    // ------------------------------------------------------------------ helpers: waiting and asserting

    @FunctionalInterface
    private interface Query<T> {
        T get() throws Exception;
    }

    private static <T> T query(Query<T> q) {
        try {
            return q.get();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /**
     * Polls with backoff: zero-cache is an external process that offers no signal for "stored",
     * so bounded retry is the only option.
     */
    private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        long sleep = 50;
        while (true) {
            RuntimeException last = null;
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                throw new CheckFailed("timed out after " + WAIT.toSeconds() + " s waiting for " + what
                        + (last == null ? "" : " (last error: " + last + ")"));
            }
            Thread.sleep(sleep);
            sleep = Math.min(1000, sleep * 2);
        }
    }

    private static void expect(boolean ok, String why) {
        if (!ok) {
            throw new CheckFailed(why);
        }
    }

    private static final class CheckFailed extends RuntimeException {
        CheckFailed(String message) {
            super(message);
        }
    }

    // ------------------------------------------------------------------ zero-cache process

    /** One run of zero-cache's replication manager (no sync workers), logging JSON lines to a file. */
    private final class ZeroCache {
        private final String label;
        private final Map<String, String> extraEnv;
        private final Path logFile;
        private Process process;

        ZeroCache(String label, Map<String, String> extraEnv) {
            this.label = label;
            this.extraEnv = extraEnv;
            this.logFile = work.resolve("zero-cache-" + label + ".log");
        }

        void start() throws Exception {
            ProcessBuilder pb = new ProcessBuilder(nodeBin.resolve("node").toString(),
                    "node_modules/@rocicorp/zero/out/zero/src/cli.js").directory(zeroDir.toFile())
                    .redirectErrorStream(true).redirectOutput(logFile.toFile());
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("ZERO_"));
            env.put("PATH", nodeBin + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
            env.put("ZERO_UPSTREAM_DB", cluster.uri(UPSTREAM_DB));
            env.put("ZERO_REPLICA_FILE", work.resolve("replica.db").toString());
            env.put("ZERO_NUM_SYNC_WORKERS", "0");
            env.put("ZERO_ADMIN_PASSWORD", "compat-check");
            env.put("ZERO_PORT", String.valueOf(zeroPort));
            env.put("ZERO_APP_ID", APP);
            env.put("ZERO_SHARD_NUM", String.valueOf(SHARD));
            env.put("ZERO_LOG_FORMAT", "json");
            // Otherwise the change streamer waits 15 s for a load balancer before taking over.
            env.put("ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS", "0");
            env.putAll(extraEnv);
            process = pb.start();
            Runtime.getRuntime().addShutdownHook(new Thread(this::kill));
            awaitTrue(() -> {
                if (!process.isAlive()) {
                    throw new CheckFailed("zero-cache " + label + " exited with " + process.exitValue() + "; see "
                            + logFile);
                }
                return log().contains("started replication stream@") && log().contains("\"message\":\"starting storer\"");
            }, "zero-cache " + label + " to start streaming (log " + logFile + ")");
        }

        String taskID() {
            for (String line : log().split("\n")) {
                int i = line.indexOf("runtime env: taskID=");
                if (i >= 0) {
                    return line.substring(i + "runtime env: taskID=".length(), line.indexOf(',', i));
                }
            }
            throw new CheckFailed("no taskID in " + logFile);
        }

        String log() {
            try {
                return Files.exists(logFile) ? Files.readString(logFile) : "";
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        List<String> linesMatching(String needle) {
            List<String> out = new ArrayList<>();
            for (String line : log().split("\n")) {
                if (line.contains(needle)) {
                    int m = line.indexOf("\"message\":");
                    out.add(m >= 0 ? line.substring(m + 10, Math.min(line.length(), m + 210)) : line);
                }
            }
            return out;
        }

        /** SIGTERM (zero-cache drains and exits), then a forced kill if it hangs. */
        void stop() throws InterruptedException {
            if (process == null || !process.isAlive()) {
                return;
            }
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                kill();
                throw new CheckFailed("zero-cache " + label + " did not stop within 60 s after SIGTERM");
            }
            expect(process.exitValue() == 0, "zero-cache " + label + " exited with " + process.exitValue() + "; see "
                    + logFile);
        }

        private void kill() {
            if (process != null && process.isAlive()) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }

        /**
         * Fails on error-level lines, change-db migrations or resets.
         *
         * @param existingSchema whether the cdc schema existed before this run (then zero-cache must
         *     only check it, never migrate it)
         */
        void assertClean(boolean existingSchema) {
            List<String> bad = new ArrayList<>();
            int litestream = 0;
            for (String line : log().split("\n")) {
                boolean cdc = line.contains("\"initSchema\":\"" + CDC + "\"");
                // A replication manager that finds a non-empty change log tries a litestream restore
                // of its replica first; this setup has no litestream, so the attempt fails and it
                // keeps the local replica file (checked by the callers). Not a change-db matter.
                if (line.contains("Missing --litestream-executable")) {
                    litestream++;
                    continue;
                }
                if (line.contains("\"level\":\"ERROR\"") || line.contains("Clearing tables")
                        || line.contains("AutoResetSignal") || line.contains("Cannot reset change db")
                        || existingSchema && cdc && line.contains("Migrating schema")) {
                    bad.add(line.length() > 400 ? line.substring(0, 400) + "..." : line);
                }
            }
            expect(bad.isEmpty(), "zero-cache " + label + " logged problems: " + bad);
            if (litestream > 0) {
                System.out.println("COMPAT-INFO zero-cache " + label + ": " + litestream + " log lines about the"
                        + " skipped litestream restore (no litestream here; the local replica file is kept)");
            }
            expect(log().contains("Running change-streamer at schema v6"), "zero-cache " + label
                    + " did not report change-streamer schema v6");
        }
    }

    // ------------------------------------------------------------------ change-streamer subscriber

    /** A protocol-v6 subscriber over java.net.http's WebSocket that acks every frame. */
    private static final class Subscriber implements WebSocket.Listener, AutoCloseable {
        private final BlockingQueue<String> frames = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();
        private final ProtocolCodec codec = new ProtocolCodec();
        private WebSocket ws;
        private volatile String closed;
        private int received;

        int received() {
            return received;
        }

        static Subscriber open(int port, String replicaVersion, String watermark) throws Exception {
            Subscriber s = new Subscriber();
            String q = "id=zrm-compat-subscriber&replicaVersion=" + enc(replicaVersion) + "&watermark=" + enc(watermark)
                    + "&initial=true&mode=serving";
            s.ws = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + "/replication/v6/changes?" + q), s)
                    .get(30, TimeUnit.SECONDS);
            return s;
        }

        private static String enc(String s) {
            return URLEncoder.encode(s, StandardCharsets.UTF_8);
        }

        /** Messages of the transaction committing at {@code watermark}, begin to commit, as received. */
        List<String> untilCommit(String watermark) throws Exception {
            List<String> txn = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                String frame = frames.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (frame == null) {
                    throw new CheckFailed("no commit at " + watermark + " from zero-cache's change-streamer"
                            + (closed == null ? "" : " (closed: " + closed + ")") + "; received " + txn);
                }
                Frame f = codec.decodeFrame(frame);
                received++;
                ws.sendText("{\"ack\":" + f.id() + "}", true);
                String msg = f.msg();
                if (msg.startsWith("[\"begin\"")) {
                    txn.clear();
                }
                if (msg.startsWith("[\"begin\"") || msg.startsWith("[\"data\"") || msg.startsWith("[\"commit\"")) {
                    txn.add(msg);
                }
                if (msg.startsWith("[\"commit\"") && msg.endsWith("{\"watermark\":\"" + watermark + "\"}]")) {
                    return txn;
                }
            }
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                frames.add(partial.toString());
                partial.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closed = statusCode + " " + reason;
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closed = "error " + error;
        }

        @Override
        public void close() {
            if (ws != null) {
                ws.abort();
            }
        }
    }
}
