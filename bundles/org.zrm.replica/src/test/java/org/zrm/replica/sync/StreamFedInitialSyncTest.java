package org.zrm.replica.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.ReplicaLayout;
import org.zrm.replica.ReplicaStateReader;

class StreamFedInitialSyncTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    @TempDir
    Path dir;

    private Path replica() {
        return dir.resolve("replica.db");
    }

    private StreamFedInitialSync sync(List<String> publications) {
        return new StreamFedInitialSync("ws://src.test/changes", replica(), "zero", 0, publications,
                Map.of("hostname", "h"));
    }

    private ChangeSourceException syncFails(List<String> messages) {
        ChangeSourceException e = assertThrows(ChangeSourceException.class,
                () -> sync(List.of()).sync(new ListStream(messages)));
        assertFalse(Files.exists(StreamFedInitialSync.tempFile(replica())), "temporary file left behind");
        return e;
    }

    private static List<String> query(Connection c, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder sb = new StringBuilder();
                for (int i = 1; i <= n; i++) {
                    sb.append(i == 1 ? "" : "|").append(rs.getString(i));
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    private Connection open() throws SQLException {
        return new org.sqlite.JDBC().connect("jdbc:sqlite:" + replica(), new Properties());
    }

    @Test
    void theFirstTransactionBecomesTheReplicaAtItsWatermark() throws Exception {
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0a"));
        msgs.add(1, "[\"status\",{\"ack\":true},{\"watermark\":\"09\"}]"); // ignored
        ListStream stream = new ListStream(msgs);
        SubscriptionState s = sync(List.of("zero_b", "zero_a")).sync(stream);

        assertEquals(new SubscriptionState("0a", List.of("zero_a", "zero_b"), "0a"), s);
        assertFalse(stream.closed, "sync() leaves closing to the caller");
        assertFalse(Files.exists(StreamFedInitialSync.tempFile(replica())));
        try (Connection c = open()) {
            var state = ReplicaStateReader.read(c).orElseThrow();
            assertEquals(ReplicaLayout.SCHEMA_VERSION, state.schemaVersion());
            assertEquals("0a", state.replicaVersion());
            assertEquals("0a", state.stateVersion());
            assertEquals(List.of("zero_a", "zero_b"), state.publications());
            assertEquals(Map.of("hostname", "h"), state.initialSyncContext());
            assertEquals(List.of("1|hello|0a"), query(c, "SELECT id, title, _0_version FROM items"));
            // Built by the replicator's create-table: no _0_version default (the pg initial sync's has one).
            assertEquals(List.of("CREATE TABLE \"items\" (\n\"id\" \"int4|NOT_NULL\",\n\"title\" \"text\",\n"
                    + "\"_0_version\" \"text\"\n)"), query(c, "SELECT sql FROM sqlite_master WHERE name = 'items'"));
            assertEquals(List.of("items_pkey"), query(c, "SELECT name FROM sqlite_master WHERE type = 'index' "
                    + "AND tbl_name = 'items'"));
            assertEquals(List.of("items|id|int4|1", "items|title|text|0"), query(c, "SELECT table_name, column_name, "
                    + "upstream_type, is_not_null FROM \"_zero.column_metadata\" WHERE table_name = 'items' ORDER BY 2"));
            assertEquals(List.of("sync"), query(c, "SELECT event FROM \"_zero.runtimeEvents\""));
        }
    }

    @Test
    void initializeSyncsOnlyWithoutAReplicaAndResetsOnRequest() throws Exception {
        int[] opened = {0};
        StreamFedInitialSync.StreamOpener opener = () -> {
            opened[0]++;
            return new ListStream(Snapshot.snapshot(opened[0] == 1 ? "0a" : "0b"));
        };
        assertEquals("0a", sync(List.of()).initialize(false, opener).replicaVersion());
        assertEquals("0a", sync(List.of()).initialize(false, opener).replicaVersion());
        assertEquals(1, opened[0]);
        assertEquals(Optional.of(new SubscriptionState("0a", List.of(), "0a")), sync(List.of()).existing());

        assertEquals("0b", sync(List.of()).initialize(true, opener).replicaVersion());
        assertEquals(2, opened[0]);
    }

    @Test
    void configuredPublicationsMustBeTheReplicas() throws Exception {
        sync(List.of("p1")).initialize(false, () -> new ListStream(Snapshot.snapshot("0a")));
        ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class,
                () -> sync(List.of("p2", "p1")).initialize(false, () -> fail("no sync expected")));
        assertEquals("Invalid ShardConfig. Requested publications [p1,p2] do not match synced publications: [p1]",
                e.getMessage());
        // No publications configured: anything goes.
        assertEquals(List.of("p1"), sync(List.of()).initialize(false, () -> fail("no sync expected")).publications());
    }

    @Test
    void resetRequiredDuringSyncIsAnAutoReset() {
        AutoResetException e = assertInstanceOf(AutoResetException.class, syncFails(List.of(Snapshot.begin("0a"),
                "[\"control\",{\"tag\":\"reset-required\",\"message\":\"cannot serve\"}]")));
        assertEquals("cannot serve", e.getMessage());
        e = assertInstanceOf(AutoResetException.class,
                syncFails(List.of("[\"control\",{\"tag\":\"reset-required\"}]")));
        assertEquals("auto-reset signaled by change source", e.getMessage());
        assertFalse(Files.exists(replica()));
    }

    @Test
    void rollbackInsideTheSnapshotFailsAndLeavesNoReplica() {
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0a"));
        msgs.set(msgs.size() - 1, "[\"rollback\",{\"tag\":\"rollback\"}]");
        ChangeSourceException e = syncFails(msgs);
        assertTrue(e.isRetryable());
        assertEquals("initial sync from ws://src.test/changes: unexpected message during initial-sync: "
                + "[\"rollback\",{\"tag\":\"rollback\"}]", e.getMessage());
        assertFalse(Files.exists(replica()));
    }

    @Test
    void streamEndingInsideTheSnapshotFails() {
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0a"));
        msgs.remove(msgs.size() - 1);
        ChangeSourceException e = syncFails(msgs);
        assertEquals("change source ws://src.test/changes closed before initial-sync completed", e.getMessage());
        assertFalse(Files.exists(replica()));
    }

    @Test
    void streamFailingInsideTheSnapshotFails() {
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0a"));
        msgs.remove(msgs.size() - 1);
        ChangeSourceException boom = new ChangeSourceException("socket reset");
        ChangeSourceException e = assertThrows(ChangeSourceException.class,
                () -> sync(List.of()).sync(new ListStream(msgs, boom)));
        assertEquals(boom, e);
        assertFalse(Files.exists(replica()));
        assertFalse(Files.exists(StreamFedInitialSync.tempFile(replica())));
    }

    @Test
    void commitOrDataWithoutBeginFails() {
        assertEquals("initial sync from ws://src.test/changes: Received message outside of transaction: commit",
                syncFails(List.of(Snapshot.commit("0a"))).getMessage());
        assertEquals("initial sync from ws://src.test/changes: Received message outside of transaction: data",
                syncFails(Snapshot.items()).getMessage());
    }

    @Test
    void commitWatermarkMustMatchTheBegin() {
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0a"));
        msgs.set(msgs.size() - 1, Snapshot.commit("0b"));
        assertTrue(syncFails(msgs).getMessage().contains("'commit' version 0b does not match 'begin' version 0a"));
    }

    @Test
    void unappliableChangeFailsNamingTheSource() {
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0a"));
        msgs.add(msgs.size() - 1, Snapshot.insert("public", "nope", List.of("id"), "{\"id\":1}"));
        String m = syncFails(msgs).getMessage();
        assertTrue(m.startsWith("initial sync from ws://src.test/changes failed: "), m);
        assertTrue(m.contains("Unknown table nope"), m);
    }

    @Test
    void aFailedSyncKeepsTheExistingReplica() throws Exception {
        sync(List.of()).sync(new ListStream(Snapshot.snapshot("0a")));
        List<String> msgs = new ArrayList<>(Snapshot.snapshot("0b"));
        msgs.remove(msgs.size() - 1);
        syncFails(msgs);
        assertEquals("0a", sync(List.of()).existing().orElseThrow().replicaVersion());
    }

    private static List<String> snapshotWith(List<String> tables) {
        List<String> m = new ArrayList<>();
        m.add(Snapshot.begin("0a"));
        m.addAll(tables);
        m.add(Snapshot.commit("0a"));
        return m;
    }

    @Test
    void missingRequiredTableGetsUpstreamsText() {
        List<String> tables = new ArrayList<>(Snapshot.clients("zero"));
        tables.addAll(Snapshot.items());
        ChangeSourceException e = syncFails(snapshotWith(tables));
        assertInstanceOf(ChangeSourceAbortedException.class, e);
        assertEquals("Upstream is missing the \"zero_0.mutations\" table. (Found items,zero_0.clients)Please ensure "
                + "that each table has a unique index over one or more non-null columns.", e.getMessage());
        assertFalse(Files.exists(replica()));
    }

    @Test
    void aTableWithoutAUniqueKeyDoesNotCount() {
        List<String> tables = new ArrayList<>(Snapshot.clients("zero"));
        tables.add(Snapshot.mutations("zero", "mutation", "json").get(0)); // no index
        tables.addAll(Snapshot.permissions("zero"));
        assertTrue(syncFails(snapshotWith(tables)).getMessage()
                .startsWith("Upstream is missing the \"zero_0.mutations\" table."));
    }

    @Test
    void mutationsNeedsTheMutationColumnNotResult() {
        // QUIRK of the custom source: the Postgres shard's mutations table has "result" instead.
        List<String> tables = new ArrayList<>(Snapshot.clients("zero"));
        tables.addAll(Snapshot.mutations("zero", "result", "json"));
        tables.addAll(Snapshot.permissions("zero"));
        ChangeSourceException e = syncFails(snapshotWith(tables));
        assertInstanceOf(ChangeSourceAbortedException.class, e);
        assertEquals("Upstream \"zero_0.mutations\" table is missing the \"mutation\" column", e.getMessage());
    }

    @Test
    void mistypedRequiredColumnGetsUpstreamsText() {
        List<String> tables = new ArrayList<>(Snapshot.clients("zero"));
        tables.addAll(Snapshot.mutations("zero", "mutation", "text"));
        tables.addAll(Snapshot.permissions("zero"));
        ChangeSourceException e = syncFails(snapshotWith(tables));
        assertEquals("Upstream \"zero_0.mutations.mutation\" column is a string type but must be a json type.",
                e.getMessage());
    }

    @Test
    void pushStyleSessionAndAbandonment() throws Exception {
        StreamFedInitialSync sync = sync(List.of());
        List<String> msgs = Snapshot.snapshot("0c");
        try (StreamFedInitialSync.Session session = sync.open()) {
            for (int i = 0; i < msgs.size() - 1; i++) {
                assertEquals(Optional.empty(), session.accept(CODEC.decodeChangeStreamMessage(msgs.get(i))));
            }
            assertEquals(Optional.of("0c"), session.replicaVersion());
            assertTrue(Files.exists(StreamFedInitialSync.tempFile(replica())));
        } // closed before the commit: abandoned
        assertFalse(Files.exists(StreamFedInitialSync.tempFile(replica())));
        assertFalse(Files.exists(replica()));

        try (StreamFedInitialSync.Session session = sync.open()) {
            Optional<SubscriptionState> done = Optional.empty();
            for (String m : msgs) {
                done = session.accept(CODEC.decodeChangeStreamMessage(m));
            }
            assertEquals("0c", done.orElseThrow().replicaVersion());
            assertThrows(IllegalStateException.class, () -> session.accept(CODEC.decodeChangeStreamMessage(msgs.get(0))));
        }
        assertTrue(Files.exists(replica()));
    }

    @Test
    void corruptReplicaFileIsAnAutoReset() throws Exception {
        Files.writeString(replica(), "not a database, just text that is long enough to be read as a header......");
        assertThrows(AutoResetException.class, () -> sync(List.of()).existing());
    }

    @Test
    void requiredTablesAreZerosThree() {
        assertEquals(List.of("app_3.clients", "app_3.mutations", "app.permissions"),
                List.copyOf(StreamFedInitialSync.requiredTables("app", 3).keySet()));
    }
}
