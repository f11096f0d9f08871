package org.zrm.example.jsonl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.json.ProtocolCodec;

/** The whole source against a real directory and a real SQLite replica (through the stream-fed initial sync). */
class JsonlChangeSourceTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    /** Long enough that a test passing by the fallback re-read alone would stand out; waits end at the signal. */
    private static final Duration RECHECK = Duration.ofSeconds(5);

    @TempDir
    Path tmp;
    private Path dir;
    private Path replica;

    @BeforeEach
    void setUp() throws IOException {
        dir = Files.createDirectories(tmp.resolve("changes"));
        replica = tmp.resolve("replica.db");
        Files.writeString(dir.resolve("schema.json"), TransactionLineTest.SCHEMA);
    }

    private JsonlChangeSource source() {
        return new JsonlChangeSource(new JsonlChangeSource.Settings(dir, "zero", 0, replica, 1 << 16, RECHECK));
    }

    private void append(int file, String text) throws IOException {
        Files.writeString(dir.resolve(ChangeDirectory.fileName(file)), text, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private static String insert(long id, String title) {
        return "{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"id\":" + id + ",\"title\":\""
                + title + "\"}}]}\n";
    }

    private static String wm(int file, long line) {
        return new Position(file, line).watermark();
    }

    /** The next transaction's messages, as JSON. */
    private static List<String> transaction(ChangeStream s) throws Exception {
        List<String> out = new ArrayList<>();
        while (true) {
            ChangeStreamMessage m = s.poll(Duration.ofSeconds(20));
            assertTrue(m != null, "no message within 20 s after " + out);
            out.add(CODEC.encode(m));
            if (out.get(out.size() - 1).startsWith("[\"commit\"")) {
                return out;
            }
        }
    }

    private List<List<Object>> rows(String sql) throws SQLException {
        try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite:" + replica, new Properties());
                Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            List<List<Object>> out = new ArrayList<>();
            while (rs.next()) {
                List<Object> row = new ArrayList<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    row.add(rs.getObject(i));
                }
                out.add(row);
            }
            return out;
        }
    }

    @Test
    void theSnapshotIsTheFoldedFilesAndTheStreamContinuesWithTheNextLine() throws Exception {
        append(1, insert(1, "one") + insert(2, "two"));
        append(1, "{\"changes\":[{\"op\":\"update\",\"table\":\"public.items\",\"row\":{\"id\":1,\"title\":\"uno\"}},"
                + "{\"op\":\"delete\",\"table\":\"public.items\",\"key\":{\"id\":2}}]}\n");
        append(1, "{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"id\":3");  // not complete yet

        SubscriptionState state = source().initialize(false);
        assertEquals(wm(1, 3), state.replicaVersion());
        assertEquals(wm(1, 3), state.watermark());
        assertEquals(List.of(List.of(1, "uno")), rows("SELECT id, title FROM items ORDER BY id"));
        assertEquals(List.of(List.of(wm(1, 3))), rows("SELECT replicaVersion FROM \"_zero.replicationConfig\""));
        assertEquals(List.of(), rows("SELECT * FROM \"zero_0.clients\""));

        JsonlChangeSource source = source();
        try (ChangeStream s = source.startStream(state.watermark(), List.of())) {
            assertNull(s.poll(Duration.ofMillis(300)), "the incomplete line is not a transaction yet");
            append(1, ",\"title\":\"three\"}}]}\n");
            List<String> tx = transaction(s);
            assertEquals(3, tx.size(), tx.toString());
            assertTrue(tx.get(0).contains("\"commitWatermark\":\"" + wm(1, 4) + "\""), tx.get(0));
            assertTrue(tx.get(1).contains("\"tag\":\"insert\"") && tx.get(1).contains("\"three\""), tx.get(1));
            assertTrue(tx.get(2).contains("\"watermark\":\"" + wm(1, 4) + "\""), tx.get(2));

            // Rotation: the next file continues, with a higher watermark.
            append(2, insert(4, "four"));
            tx = transaction(s);
            assertTrue(tx.get(0).contains(wm(2, 1)), tx.get(0));
            assertTrue(wm(1, 4).compareTo(wm(2, 1)) < 0);
        }
    }

    @Test
    void acksAreWrittenForTheWriterAndAResumedStreamStartsAfterTheWatermark() throws Exception {
        append(1, insert(1, "one"));
        SubscriptionState state = source().initialize(false);
        append(1, insert(2, "two") + insert(3, "three"));
        JsonlChangeSource source = source();
        try (ChangeStream s = source.startStream(state.watermark(), List.of())) {
            transaction(s);
            transaction(s);
            s.ack(new ChangeSourceUpstream(new Commit(Passthrough.NONE), wm(1, 2)));
            s.ack(new ChangeSourceUpstream(new Commit(Passthrough.NONE), wm(1, 3)));
            s.ack(new ChangeSourceUpstream(new Commit(Passthrough.NONE), wm(1, 2))); // late and lower: no effect
            assertNull(s.poll(Duration.ofMillis(100)));
            String acked = Files.readString(dir.resolve(ChangeDirectory.ACKED));
            assertTrue(acked.contains("\"watermark\":\"" + wm(1, 3) + "\"") && acked.contains("\"id\":\"test-dir\"")
                    && acked.contains("\"file\":\"changes-000001.jsonl\",\"line\":3"), acked);
        }
        source.stop();

        // A restart: the replica is kept, and the stream resumes after the change log's watermark.
        append(2, insert(4, "four"));
        JsonlChangeSource restarted = source();
        assertEquals(state, restarted.initialize(false));
        try (ChangeStream s = restarted.startStream(wm(1, 2), List.of())) {
            assertTrue(transaction(s).get(0).contains(wm(1, 3)));
            assertTrue(transaction(s).get(0).contains(wm(2, 1)));
        }
        // The fully acked file is removed by the writer: streaming after its last line still works.
        Files.delete(dir.resolve(ChangeDirectory.fileName(1)));
        try (ChangeStream s = restarted.startStream(wm(1, 3), List.of())) {
            assertTrue(transaction(s).get(0).contains(wm(2, 1)));
        }
    }

    @Test
    void aWatermarkTheFilesCannotServeIsResetRequired() throws Exception {
        append(1, insert(1, "one") + insert(2, "two"));
        SubscriptionState state = source().initialize(false);
        JsonlChangeSource source = source();

        AutoResetException e = assertThrows(AutoResetException.class, () -> source.startStream(wm(1, 9), List.of()));
        assertTrue(e.getMessage().contains("changes-000001.jsonl has only 2 complete lines"), e.getMessage());

        append(3, insert(5, "five"));
        Files.delete(dir.resolve(ChangeDirectory.fileName(1)));
        e = assertThrows(AutoResetException.class, () -> source.startStream(wm(1, 2), List.of()));
        assertTrue(e.getMessage().contains("changes-000001.jsonl is gone and changes-000002.jsonl is not the oldest"),
                e.getMessage());
        assertInstanceOf(AutoResetException.class, assertThrows(ChangeSourceException.class,
                () -> source.startStream("0a.3z", List.of())));

        // The directory re-created with a new id: the replica belongs to the old history.
        Files.writeString(dir.resolve("schema.json"), TransactionLineTest.SCHEMA.replace("test-dir", "test-dir-2"));
        e = assertThrows(AutoResetException.class, () -> source().initialize(false));
        assertTrue(e.getMessage().contains("the directory's id is now \"test-dir-2\""), e.getMessage());
        e = assertThrows(AutoResetException.class, () -> source.startStream(state.watermark(), List.of()));
        assertTrue(e.getMessage().contains("re-created"), e.getMessage());

        // What ZRM does next: initialize(true) syncs again, here from changes-000001 on (which is gone).
        ChangeSourceException resync = assertThrows(ChangeSourceException.class, () -> source().initialize(true));
        assertTrue(resync.getMessage().contains("changes-000001.jsonl is missing"), resync.getMessage());
        assertFalse(Files.exists(replica), "no half-built replica is left");
        Files.move(dir.resolve(ChangeDirectory.fileName(3)), dir.resolve(ChangeDirectory.fileName(1)));
        assertEquals(wm(1, 1), source().initialize(true).replicaVersion());
        assertEquals(List.of(List.of(5, "five")), rows("SELECT id, title FROM items ORDER BY id"));
    }

    @Test
    void aReplicaOfAnotherSourceIsResetRequired() throws Exception {
        append(1, insert(1, "one"));
        source().initialize(false);
        Files.delete(JsonlChangeSource.identityFile(replica)); // as if another source had built the replica
        assertThrows(AutoResetException.class, () -> source().initialize(false));
        Files.writeString(dir.resolve("schema.json"), TransactionLineTest.SCHEMA.replace("\"tags\":\"json\"", "\"tags\":\"jsonb\""));
        source().initialize(true);
        Files.writeString(dir.resolve("schema.json"), TransactionLineTest.SCHEMA);
        AutoResetException e = assertThrows(AutoResetException.class, () -> source().initialize(false));
        assertTrue(e.getMessage().contains("schema.json changed"), e.getMessage());
    }

    @Test
    void aBadLineFailsTheStreamNamingFileAndLineAndNothingOfItIsSent() throws Exception {
        SubscriptionState state = source().initialize(false);
        assertEquals(Position.START.watermark(), state.replicaVersion());
        append(1, insert(1, "one") + "{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"id\":2}},"
                + "{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"title\":\"no key\"}}]}\n" + insert(3, "three"));
        JsonlChangeSource source = source();
        try (ChangeStream s = source.startStream(state.watermark(), List.of())) {
            assertTrue(transaction(s).get(0).contains(wm(1, 1)));
            ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> s.poll(Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("changes-000001.jsonl:2: changes[1]: primary key column \"id\""),
                    e.getMessage());
            assertFalse(e instanceof AutoResetException);
            // The stream stays failed: the retry after back-off starts a new one, from the stored position.
            assertThrows(ChangeSourceException.class, () -> s.poll(Duration.ZERO));
        }
        // A bad line in the files fails an initial sync the same way, and leaves no replica behind.
        ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> source().initialize(true));
        assertTrue(e.getMessage().contains("initial sync: changes-000001.jsonl:2:"), e.getMessage());
        assertFalse(Files.exists(replica));
    }

    @Test
    void closeWakesAWaitingConsumerAndStopClosesTheOpenStream() throws Exception {
        SubscriptionState state = source().initialize(false);
        JsonlChangeSource source = source();
        ChangeStream s = source.startStream(state.watermark(), List.of());
        Thread closer = new Thread(() -> {
            try {
                Thread.sleep(200); // lets take() block first; the assertion does not depend on it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            source.stop();
        });
        long start = System.nanoTime();
        closer.start();
        assertThrows(ChangeStreamClosedException.class, s::take);
        assertTrue(System.nanoTime() - start < RECHECK.toNanos(), "woken by close, not by the recheck bound");
        closer.join();
        s.close();
        assertThrows(ChangeSourceException.class, () -> source.startStream(state.watermark(), List.of()));
    }
}
