package org.zrm.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The fault suite's check over the whole history of a run, Jepsen-style: not a sample, every
 * transaction.
 *
 * <ul>
 *   <li>The committed transactions are read back from upstream (a commit whose reply was lost in
 *       the fault may or may not have happened; upstream knows).</li>
 *   <li>The change log holds each of them exactly once, whole (begin first, commit last,
 *       positions without a gap), and in commit order; nothing else of the load.</li>
 *   <li>The replica file holds exactly upstream's rows.</li>
 *   <li>Each subscriber received, after its start watermark, exactly the change log's
 *       transactions, each once, in order, across its reconnects.</li>
 * </ul>
 */
final class FaultInvariant {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHANGE_LOG = Pipeline.CDC + ".\"changeLog\"";

    private FaultInvariant() {}

    /**
     * Where a check's connections come from: a {@code PgDatabase::connect} in a launched runtime's
     * test, the framework's drivers in a Pax Exam test (where {@code DriverManager} sees none).
     */
    @FunctionalInterface
    interface Db {
        Connection connect() throws SQLException;

        /** The replica file, read through sqlite-jdbc on the test's class path. */
        static Db sqlite(Path file) {
            return () -> DriverManager.getConnection("jdbc:sqlite:" + file);
        }
    }

    /** @return the load's transaction number of a change body, or -1 if it is not a load row */
    static long seqOf(JsonNode change) {
        String relation = change.path("relation").path("name").asText();
        if (!relation.equals("fault_a") && !relation.equals("fault_b")) {
            return -1;
        }
        JsonNode row = change.path("new");
        return row.hasNonNull("seq") ? Long.parseLong(row.get("seq").asText()) : -1;
    }

    /** One transaction of the change log. */
    record Logged(String watermark, long seq) {}

    /** What the check found; {@link #problems} is empty for a clean run. */
    record Outcome(long committed, long lost, long duplicated, List<String> problems) {}

    /** @return the highest load number stored in the change log, or 0 */
    static long maxLoggedSeq(Db db) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT coalesce(max((change->'new'->>'seq')::int8), 0) FROM " + CHANGE_LOG
                        + " WHERE change->'relation'->>'name' IN ('fault_a', 'fault_b')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Once the load has stopped: waits (bounded) until the change log holds upstream's last
     * committed transaction and every subscriber has its commit.
     *
     * @return what did not catch up within {@code bound} (empty when everything did); the check
     *     that follows reports the details
     */
    static List<String> awaitCaughtUp(Db db, Db changeDb, List<FaultSubscriber> subscribers, String replicaVersion,
            Duration bound) throws Exception {
        long maxCommitted = committed(db).stream().mapToLong(Long::longValue).max().orElse(0);
        long deadline = System.nanoTime() + bound.toNanos();
        while (maxLoggedSeq(changeDb) < maxCommitted && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(50); // the storer signals nothing a test can wait on
        }
        String last = lastCommitWatermark(changeDb, replicaVersion);
        List<String> problems = new ArrayList<>();
        for (FaultSubscriber s : subscribers) {
            try {
                s.awaitWatermark(last, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (AssertionError e) {
                problems.add(e.getMessage());
            }
        }
        return problems;
    }

    /**
     * A cheap reading of the change log for a running check (the soak's minute lines): for each
     * load transaction, in how many change-log transactions it appears.
     */
    static Map<Long, Integer> loggedCounts(Db db) throws SQLException {
        Map<Long, Integer> counts = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT (change->'new'->>'seq')::int8, count(DISTINCT watermark) FROM "
                        + CHANGE_LOG + " WHERE change->'relation'->>'name' IN ('fault_a', 'fault_b')"
                        + " AND change->>'tag' = 'insert' GROUP BY 1")) {
            while (rs.next()) {
                counts.put(rs.getLong(1), rs.getInt(2));
            }
        }
        return counts;
    }

    /**
     * @return the load's highest transaction stored at or before {@code watermark} (0 if none); as
     *     the storer writes a transaction whole, this is exact for a watermark the log has reached
     */
    static long seqAt(Db db, String watermark) throws SQLException {
        try (Connection c = db.connect(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT coalesce(max((change->'new'->>'seq')::int8), 0) FROM " + CHANGE_LOG
                        + " WHERE change->'relation'->>'name' IN ('fault_a', 'fault_b') AND watermark <= ?")) {
            ps.setString(1, watermark);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** @return the latest commit watermark in the change log, or {@code fallback} */
    static String lastCommitWatermark(Db db, String fallback) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT max(watermark) FROM " + CHANGE_LOG + " WHERE change->>'tag' = 'commit'")) {
            rs.next();
            String w = rs.getString(1);
            return w == null ? fallback : w;
        }
    }

    /** The change log's load transactions in watermark order; whole-transaction problems go to {@code problems}. */
    static List<Logged> changeLog(Db db, List<String> problems) throws Exception {
        Map<String, List<JsonNode>> byWatermark = new LinkedHashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT watermark, pos, change::text FROM " + CHANGE_LOG + " ORDER BY watermark, pos")) {
            while (rs.next()) {
                List<JsonNode> tx = byWatermark.computeIfAbsent(rs.getString(1), w -> new ArrayList<>());
                if (rs.getLong(2) != tx.size()) {
                    problems.add("change log: position " + rs.getLong(2) + " of " + rs.getString(1) + " after " + tx.size() + " entries");
                }
                tx.add(JSON.readTree(rs.getString(3)));
            }
        }
        List<Logged> logged = new ArrayList<>();
        for (Map.Entry<String, List<JsonNode>> e : byWatermark.entrySet()) {
            List<JsonNode> tx = e.getValue();
            String first = tx.get(0).path("tag").asText();
            String last = tx.get(tx.size() - 1).path("tag").asText();
            if (!first.equals("begin") || !last.equals("commit") || tx.size() < 2) {
                problems.add("change log: transaction " + e.getKey() + " is not begin..commit: " + first + ".." + last);
            }
            long seq = -1;
            for (JsonNode change : tx) {
                long s = seqOf(change);
                if (s >= 0 && seq >= 0 && s != seq) {
                    problems.add("change log: transactions " + seq + " and " + s + " in one entry " + e.getKey());
                }
                seq = s >= 0 ? s : seq;
            }
            if (seq >= 0) {
                logged.add(new Logged(e.getKey(), seq));
            }
        }
        return logged;
    }

    /** @return the load numbers upstream committed (see {@link FaultLoad} for the rows each writes) */
    static Set<Long> committed(Db db) throws SQLException {
        Set<Long> committed = new TreeSet<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT id FROM fault_a UNION ALL SELECT id / 10 FROM fault_b WHERE id % 10 = 0")) {
            while (rs.next()) {
                committed.add(rs.getLong(1));
            }
        }
        return committed;
    }

    /**
     * Runs the whole check once the load has stopped and the pipeline has caught up.
     *
     * @param db upstream, with the load's tables
     * @param changeDb the change database (may be {@code db})
     * @param acked the highest transaction whose commit returned to the writer
     */
    static Outcome check(Db db, Db changeDb, Db replica, long acked, List<FaultSubscriber> subscribers)
            throws Exception {
        List<String> problems = new ArrayList<>();
        Set<Long> committed = committed(db);
        if (acked > 0 && !committed.contains(acked)) {
            problems.add("upstream lost the acknowledged transaction " + acked);
        }
        List<Logged> logged = changeLog(changeDb, problems);

        Map<Long, Integer> counts = new HashMap<>();
        long previous = 0;
        long inversions = 0;
        for (Logged l : logged) {
            counts.merge(l.seq(), 1, Integer::sum);
            if (l.seq() <= previous) {
                inversions++;
            }
            previous = Math.max(previous, l.seq());
        }
        long duplicated = counts.values().stream().mapToLong(n -> n - 1).sum();
        // The change streamer purges what the backup monitor confirmed (after cleanupDelayMs): a
        // prefix of the history, since the load commits in order. Only a gap after it is a loss;
        // the subscribers below are held to every committed transaction, purged or not.
        long horizon = logged.stream().mapToLong(Logged::seq).min().orElse(0);
        List<Long> missing = committed.stream().filter(n -> n >= horizon && !counts.containsKey(n)).toList();
        List<Long> phantom = counts.keySet().stream().filter(n -> !committed.contains(n)).sorted().toList();
        if (!missing.isEmpty()) {
            problems.add("change log: " + missing.size() + " committed transactions missing: " + abbreviate(missing));
        }
        if (duplicated > 0) {
            problems.add("change log: " + duplicated + " transactions stored more than once: "
                    + abbreviate(counts.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).sorted().toList()));
        }
        if (inversions > duplicated) {
            problems.add("change log: " + inversions + " transactions out of commit order");
        }
        if (!phantom.isEmpty()) {
            problems.add("change log: transactions upstream never committed: " + abbreviate(phantom));
        }
        long lost = missing.size();

        for (FaultSubscriber sub : subscribers) {
            if (sub.error() != null) {
                problems.add(sub.name() + " failed: " + sub.error());
            }
            List<Long> expected = committed.stream().filter(n -> n > sub.startSeq()).sorted().toList();
            List<Long> got = sub.seen().stream().filter(s -> s.seq() >= 0).map(FaultSubscriber.Seen::seq).toList();
            if (!got.equals(expected)) {
                Map<Long, Integer> seen = new HashMap<>();
                got.forEach(n -> seen.merge(n, 1, Integer::sum));
                long subDup = seen.values().stream().mapToLong(n -> n - 1).sum();
                List<Long> subLost = expected.stream().filter(n -> !seen.containsKey(n)).toList();
                problems.add(sub.name() + " (from " + sub.startWatermark() + ", " + sub.reconnects() + " reconnects): "
                        + got.size() + " transactions, expected " + expected.size() + "; missing " + abbreviate(subLost)
                        + ", " + subDup + " duplicated");
                lost += subLost.size();
                duplicated += subDup;
            }
        }

        String replicaDiff = awaitReplicaEqual(db, replica, Duration.ofSeconds(60));
        if (replicaDiff != null) {
            problems.add(replicaDiff);
        }
        return new Outcome(committed.size(), lost, duplicated, problems);
    }

    /**
     * Polls the replica until its load tables equal upstream's: the replicator (in another
     * process) signals nothing a test can wait on. Bounded.
     *
     * @return null if equal, otherwise what differs
     */
    static String awaitReplicaEqual(Db db, Db replica, Duration bound) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        String diff;
        while (true) {
            diff = null;
            for (String table : List.of("fault_a", "fault_b")) {
                String sql = "SELECT id, seq, v FROM " + table + " ORDER BY id";
                List<List<String>> up;
                List<List<String>> rep;
                try (Connection c = db.connect()) {
                    up = Pipeline.rows(c, sql);
                }
                try (Connection c = replica.connect()) {
                    rep = Pipeline.rows(c, sql);
                } catch (SQLException e) {
                    rep = List.of(List.of(e.getMessage()));
                }
                if (!up.equals(rep)) {
                    List<List<String>> onlyUp = new ArrayList<>(up);
                    onlyUp.removeAll(rep);
                    List<List<String>> onlyRep = new ArrayList<>(rep);
                    onlyRep.removeAll(up);
                    diff = "replica " + table + " differs (" + rep.size() + " vs " + up.size() + " rows): only upstream "
                            + abbreviate(onlyUp) + ", only replica " + abbreviate(onlyRep);
                    break;
                }
            }
            if (diff == null || System.nanoTime() > deadline) {
                return diff;
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    static String abbreviate(List<?> list) {
        return list.size() <= 12 ? list.toString() : list.subList(0, 12) + "... (" + list.size() + ")";
    }
}
