package org.zrm.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.osgi.framework.BundleContext;

/**
 * Access to the parts of a running pipeline a test checks: the upstream database and its change
 * log, the SQLite replica file, {@code /status} and {@code /metrics}. JDBC drivers are used
 * directly because {@code DriverManager} cannot see drivers in other bundles.
 */
final class Pipeline {

    /** The change log schema of the shipped defaults ({@code app.id = zero}, {@code shard.num = 0}). */
    static final String CDC = "\"zero_0/cdc\"";
    /** Long enough for an initial sync or a component restart on a busy 2-core machine. */
    static final Duration SLOW_WAIT = Duration.ofSeconds(90);

    private final BundleContext context;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();

    Pipeline(BundleContext context) {
        this.context = context;
    }

    HttpClient http() {
        return http;
    }

    String port() {
        return context.getProperty(ZrmRuntimeOptions.HTTP_PORT);
    }

    Connection upstream() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("connectTimeout", "10");
        return new org.postgresql.Driver().connect(context.getProperty(ZrmRuntimeOptions.UPSTREAM_JDBC), p);
    }

    Connection replica() throws SQLException {
        return new org.sqlite.JDBC().connect("jdbc:sqlite:" + context.getProperty(ZrmRuntimeOptions.REPLICA_FILE),
                new Properties());
    }

    /** Runs each statement in its own (autocommit) transaction upstream. */
    void exec(String... statements) throws SQLException {
        try (Connection c = upstream(); Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }

    /** Runs all statements in one upstream transaction. */
    void execInOneTransaction(String... statements) throws SQLException {
        try (Connection c = upstream(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            for (String sql : statements) {
                s.execute(sql);
            }
            c.commit();
        }
    }

    /** @return {@code replicationState.lastWatermark}: the last commit the storer made durable */
    String lastStoredWatermark() throws SQLException {
        return queryStrings("SELECT \"lastWatermark\" FROM " + CDC + ".\"replicationState\"").get(0);
    }

    /** @return every commit watermark in the change log, in order */
    List<String> storedCommitWatermarks() throws SQLException {
        return queryStrings("SELECT watermark FROM " + CDC + ".\"changeLog\" WHERE change->>'tag' = 'commit'"
                + " ORDER BY watermark");
    }

    /** @return the watermark of the stored transaction that inserted row {@code id} into {@code table} */
    String storedInsertWatermark(String table, long id) throws SQLException {
        List<String> w = queryStrings("SELECT watermark FROM " + CDC + ".\"changeLog\" WHERE change->>'tag' = 'insert'"
                + " AND change->'relation'->>'name' = '" + table + "' AND (change->'new'->>'id')::int8 = " + id);
        return w.isEmpty() ? null : w.get(0);
    }

    /**
     * Waits until the storer has made the insert of row {@code id} durable. The storer offers no
     * signal a test can subscribe to, so the change log is polled within a bounded deadline.
     */
    String awaitStoredInsert(String table, long id) throws Exception {
        long deadline = System.nanoTime() + SLOW_WAIT.toNanos();
        while (true) {
            String w = storedInsertWatermark(table, id);
            if (w != null && w.compareTo(lastStoredWatermark()) <= 0) {
                return w;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("insert of " + table + " id " + id + " not stored within " + SLOW_WAIT);
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /**
     * Waits until the storer's {@code lastWatermark} has reached {@code watermark}. The change
     * streamer forwards a transaction to subscribers without waiting for the storer (as zero-cache
     * does), so a test that received a commit live must wait before it looks in the change log.
     */
    void awaitStored(String watermark) throws Exception {
        long deadline = System.nanoTime() + SLOW_WAIT.toNanos();
        String last = lastStoredWatermark();
        while (last.compareTo(watermark) < 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("change log at " + last + ", not at " + watermark + " within " + SLOW_WAIT);
            }
            TimeUnit.MILLISECONDS.sleep(50);
            last = lastStoredWatermark();
        }
    }

    /**
     * A watermark to subscribe at so that only transactions committed after this call arrive:
     * commits a marker row into {@code markerTable} (an {@code int8 id} primary key) and waits until
     * the storer has it. Commits stream and are stored in commit order, so everything committed
     * before the marker (e.g. by an earlier test of the class) is then at or below the returned
     * watermark; {@link #lastStoredWatermark()} alone may still lag behind such commits.
     */
    String settledWatermark(String markerTable) throws Exception {
        long id = Long.parseLong(queryStrings("INSERT INTO " + markerTable + " SELECT coalesce(max(id), 0) + 1 FROM "
                + markerTable + " RETURNING id").get(0));
        awaitStoredInsert(markerTable, id);
        return lastStoredWatermark();
    }

    List<String> queryStrings(String sql) throws SQLException {
        try (Connection c = upstream(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<String> out = new ArrayList<>();
            while (rs.next()) {
                out.add(rs.getString(1));
            }
            return out;
        }
    }

    /** @return {@code _zero.replicationState.stateVersion} of the replica file */
    String replicaStateVersion() throws SQLException {
        try (Connection c = replica(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT stateVersion FROM \"_zero.replicationState\"")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /**
     * Waits until the replica file has applied the commit at {@code watermark}. The replicator
     * writes a file and signals nothing a test can observe, so it is polled within a deadline.
     */
    void awaitReplicaAt(String watermark) throws Exception {
        long deadline = System.nanoTime() + SLOW_WAIT.toNanos();
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = replicaStateVersion();
            if (seen != null && seen.compareTo(watermark) >= 0) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("replica at " + seen + ", not at " + watermark + " within " + SLOW_WAIT);
    }

    /** @return the rows of {@code sql} (run on {@code c}) as lists of column values rendered as strings */
    static List<List<String>> rows(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            int n = rs.getMetaData().getColumnCount();
            List<List<String>> out = new ArrayList<>();
            while (rs.next()) {
                List<String> row = new ArrayList<>(n);
                for (int i = 1; i <= n; i++) {
                    row.add(rs.getString(i));
                }
                out.add(row);
            }
            return out;
        }
    }

    JsonNode status() throws Exception {
        return json.readTree(get("/status"));
    }

    String metrics() throws Exception {
        return get("/metrics");
    }

    /**
     * GET with a bounded retry: the whiteboard gives a client no signal when a servlet is
     * registered, so a 404 or refused connection right after start (or a restart) is retried.
     */
    String get(String path) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + port() + path);
        long deadline = System.nanoTime() + SLOW_WAIT.toNanos();
        String last = "nothing";
        while (true) {
            try {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                        .build(), HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return response.body();
                }
                last = response.statusCode() + " " + response.body();
            } catch (IOException e) {
                last = e.toString();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("GET " + uri + " answered " + last);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    /**
     * Polls {@code /status} until {@code condition} holds. Status is a pull-only view of
     * components in other bundles, so there is no event to wait for; the poll is bounded.
     */
    JsonNode awaitStatus(String what, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + SLOW_WAIT.toNanos();
        JsonNode status = status();
        while (!condition.test(status)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " not reached within " + SLOW_WAIT + "; /status: " + status);
            }
            TimeUnit.MILLISECONDS.sleep(100);
            status = status();
        }
        return status;
    }

    /**
     * Waits until the change streamer streams and the backup replicator replicates.
     *
     * @return the replica version the change streamer serves
     */
    String awaitStreaming() throws Exception {
        JsonNode status = awaitStatus("streaming change streamer and replicating replicator", s -> {
            JsonNode cs = s.path("sections").path("changestreamer");
            JsonNode r = s.path("sections").path("replicator");
            return "streaming".equals(cs.path("state").asText()) && cs.hasNonNull("replicaVersion")
                    && "REPLICATING".equals(r.path("phase").asText());
        });
        return status.path("sections").path("changestreamer").get("replicaVersion").asText();
    }
}
