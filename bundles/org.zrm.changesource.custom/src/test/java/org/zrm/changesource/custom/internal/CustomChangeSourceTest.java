package org.zrm.changesource.custom.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.sync.StreamFedInitialSync;

class CustomChangeSourceTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    @TempDir
    Path dir;

    FakeEndpoint endpoint;
    CustomChangeSource source;

    @BeforeEach
    void start() throws Exception {
        endpoint = new FakeEndpoint();
        source = source(endpoint.url(), new StreamSettings(Duration.ofSeconds(5), Duration.ofSeconds(30), 4096, 8, 1 << 20));
    }

    private CustomChangeSource source(String url, StreamSettings settings) {
        return new CustomChangeSource(new EndpointUrl(url), "zero", 0, List.of("pub_b", "pub_a"),
                dir.resolve("replica.db"), Map.of("appID", "zero"), settings);
    }

    @AfterEach
    void stop() throws Exception {
        source.stop();
        endpoint.close();
    }

    /** Runs initialize(false) against a snapshot at {@code 0a} and returns the connection it used. */
    private FakeEndpoint.Conn initialSync() throws Exception {
        Thread t = new Thread(() -> {
            try {
                FakeEndpoint.Conn c = endpoint.awaitConnection();
                c.send(Snapshot.snapshot("0a"));
                endpoint.connections.add(c); // hand it back to the test
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        SubscriptionState s = source.initialize(false);
        t.join();
        assertEquals(new SubscriptionState("0a", List.of("pub_a", "pub_b"), "0a"), s);
        return endpoint.awaitConnection();
    }

    @Test
    void initialSyncBuildsTheReplicaFromTheFirstTransactionThenClosesItsSocket() throws Exception {
        FakeEndpoint.Conn c = initialSync();
        // The initial sync names the configured publications in configured order.
        assertEquals("apiKey=secret&appID=zero&shardNum=0&publications=pub_b&publications=pub_a", c.rawQuery);
        c.awaitClosed();
        try (var db = new org.sqlite.JDBC().connect("jdbc:sqlite:" + dir.resolve("replica.db"), new Properties());
                var st = db.createStatement(); var rs = st.executeQuery("SELECT title, _0_version FROM items")) {
            assertTrue(rs.next());
            assertEquals("hello", rs.getString(1));
            assertEquals("0a", rs.getString(2));
        }
    }

    @Test
    void aResetRequiredDuringInitialSyncIsAnAutoResetAndLeavesNoReplica() throws Exception {
        Thread t = new Thread(() -> {
            try {
                endpoint.awaitConnection().send(List.of(Snapshot.begin("0a"),
                        "[\"control\",{\"tag\":\"reset-required\",\"message\":\"start over\"}]"));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        ChangeSourceException e = assertThrows(org.zrm.changesource.AutoResetException.class,
                () -> source.initialize(false));
        t.join();
        assertEquals("start over", e.getMessage());
        assertFalse(Files.exists(dir.resolve("replica.db")));
        assertFalse(Files.exists(StreamFedInitialSync.tempFile(dir.resolve("replica.db"))));
    }

    @Test
    void endpointDroppingInsideTheInitialTransactionLeavesNoReplica() throws Exception {
        Thread t = new Thread(() -> {
            try {
                FakeEndpoint.Conn c = endpoint.awaitConnection();
                List<String> snap = Snapshot.snapshot("0a");
                c.send(snap.subList(0, snap.size() - 1));
                c.drop();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> source.initialize(false));
        t.join();
        assertTrue(e.isRetryable());
        assertTrue(e.getMessage().contains(endpoint.displayName()), e.getMessage());
        assertFalse(Files.exists(dir.resolve("replica.db")));
        assertFalse(Files.exists(StreamFedInitialSync.tempFile(dir.resolve("replica.db"))));
    }

    @Test
    void resumesAfterTheStoredWatermarkAndStreamsBigIntJson() throws Exception {
        initialSync();
        ChangeStream stream = source.startStream("0b", List.of());
        FakeEndpoint.Conn c = endpoint.awaitConnection();
        assertEquals("apiKey=secret&appID=zero&shardNum=0&publications=pub_a&publications=pub_b&lastWatermark=0b"
                + "&replicaVersion=0a", c.rawQuery);
        String insert = Snapshot.insert("public", "items", List.of("id"), "{\"id\":987654321987654321,\"title\":\"x\"}");
        List<String> sent = List.of(Snapshot.begin("0c"), insert, Snapshot.commit("0c"),
                "[\"status\",{\"ack\":true},{\"watermark\":\"0c\"}]");
        c.send(sent);
        for (String s : sent) {
            assertEquals(CODEC.encode(CODEC.decodeChangeStreamMessage(s)), CODEC.encode(stream.take()));
        }
        assertTrue(CODEC.encode(CODEC.decodeChangeStreamMessage(insert)).contains("987654321987654321"));
        stream.close();
        c.awaitClosed();
        assertThrows(ChangeStreamClosedException.class, stream::take);
    }

    @Test
    void acksGoUpstreamInOrderAndCoalesceToTheLatest() throws Exception {
        initialSync();
        ChangeStream stream = source.startStream("0a", List.of());
        FakeEndpoint.Conn c = endpoint.awaitConnection();
        List<String> acks = new ArrayList<>();
        for (int i = 1; i <= 2000; i++) {
            String w = String.format("1%05d", i);
            ChangeSourceUpstream ack = CODEC.decodeChangeSourceUpstream(
                    "[\"status\",{\"tag\":\"commit\"},{\"watermark\":\"" + w + "\"}]");
            acks.add(CODEC.encode(ack));
            stream.ack(ack);
        }
        List<String> got = new ArrayList<>();
        while (got.isEmpty() || !got.get(got.size() - 1).equals(acks.get(acks.size() - 1))) {
            got.add(c.awaitReceived());
        }
        assertTrue(got.size() <= acks.size());
        int last = -1;
        for (String g : got) {
            int idx = acks.indexOf(g);
            assertTrue(idx > last, "acks out of order or unknown: " + g);
            last = idx;
        }
        stream.close();
    }

    @Test
    void backfillRequestsAreRefusedWithUpstreamsText() throws Exception {
        initialSync();
        var req = CODEC.decodeBackfillRequest("{\"table\":{\"schema\":\"public\",\"name\":\"items\",\"metadata\":null},"
                + "\"columns\":{\"title\":{\"attNum\":2}}}");
        ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class,
                () -> source.startStream("0a", List.of(req)));
        assertEquals("backfill is yet not supported for custom change sources", e.getMessage());
        assertTrue(source.startLagReporter().isEmpty());
    }

    @Test
    void resetRequiredWhileStreamingIsDeliveredInBand() throws Exception {
        initialSync();
        ChangeStream stream = source.startStream("0a", List.of());
        endpoint.awaitConnection().send("[\"control\",{\"tag\":\"reset-required\",\"message\":\"gone\"}]");
        ChangeStreamMessage m = stream.take();
        assertInstanceOf(ChangeStreamMessage.ControlMessage.class, m);
        assertEquals("gone", ((ChangeStreamMessage.ControlMessage) m).control().message());
        stream.close();
    }

    /** Sends {@code messages} on a resumed stream and returns the error the consumer gets, after the messages it got. */
    private ChangeSourceException streamFails(List<String> messages, List<String> delivered) throws Exception {
        ChangeStream stream = source.startStream("0b", List.of());
        FakeEndpoint.Conn c = endpoint.awaitConnection();
        for (String m : messages) {
            try {
                c.send(m);
            } catch (java.util.concurrent.ExecutionException e) {
                break; // the client dropped the socket after a bad message, as it should
            }
        }
        try {
            while (true) {
                delivered.add(CODEC.encode(stream.take()));
            }
        } catch (ChangeSourceException e) {
            assertFalse(e instanceof ChangeStreamClosedException, "expected an error, got the end: " + e);
            assertTrue(e.getMessage().contains(endpoint.displayName()), "names the source: " + e.getMessage());
            assertFalse(e.getMessage().contains("secret"), "no apiKey in errors: " + e.getMessage());
            // The stream stays failed.
            assertEquals(e, assertThrows(ChangeSourceException.class, stream::take));
            c.awaitClosed();
            return e;
        } finally {
            stream.close();
        }
    }

    private static boolean noCommit(List<String> delivered) {
        return delivered.stream().noneMatch(d -> d.startsWith("[\"commit\""));
    }

    @Test
    void commitWithoutBeginFails() throws Exception {
        initialSync();
        List<String> got = new ArrayList<>();
        ChangeSourceException e = streamFails(List.of(Snapshot.commit("0c")), got);
        assertTrue(e.getMessage().endsWith("broke the protocol: commit 0c without begin"), e.getMessage());
        assertTrue(noCommit(got));
    }

    @Test
    void nonIncreasingWatermarkFails() throws Exception {
        initialSync();
        List<String> got = new ArrayList<>();
        // 0b is the stream's start: a transaction at 0b was stored already.
        ChangeSourceException e = streamFails(List.of(Snapshot.begin("0b"), Snapshot.commit("0b")), got);
        assertTrue(e.getMessage().endsWith("non-increasing watermark: begin 0b is not after 0b"), e.getMessage());
        assertEquals(List.of(), got);

        got.clear();
        e = streamFails(List.of(Snapshot.begin("0d"), Snapshot.commit("0d"), Snapshot.begin("0c"),
                Snapshot.commit("0c")), got);
        assertTrue(e.getMessage().endsWith("non-increasing watermark: begin 0c is not after 0d"), e.getMessage());
        assertEquals(2, got.size()); // the good transaction only
    }

    @Test
    void commitNotMatchingItsBeginFails() throws Exception {
        initialSync();
        List<String> got = new ArrayList<>();
        ChangeSourceException e = streamFails(List.of(Snapshot.begin("0c"), Snapshot.commit("0d")), got);
        assertTrue(e.getMessage().endsWith("commit 0d does not match begin 0c"), e.getMessage());
        assertTrue(noCommit(got));
    }

    @Test
    void unknownMessageTypeFails() throws Exception {
        initialSync();
        List<String> got = new ArrayList<>();
        ChangeSourceException e = streamFails(List.of(Snapshot.begin("0c"), "[\"frobnicate\",{}]", Snapshot.commit("0c")),
                got);
        assertTrue(e.getMessage().contains("sent an invalid message"), e.getMessage());
        assertTrue(e.getMessage().contains("frobnicate"), e.getMessage());
        assertTrue(noCommit(got));
    }

    @Test
    void garbageFrameFails() throws Exception {
        initialSync();
        ChangeSourceException e = streamFails(List.of("{not json"), new ArrayList<>());
        assertTrue(e.getMessage().contains("sent an invalid message"), e.getMessage());
    }

    @Test
    void frameOverTheSizeBoundFails() throws Exception {
        initialSync();
        List<String> got = new ArrayList<>();
        String big = Snapshot.insert("public", "items", List.of("id"), "{\"id\":2,\"title\":\"" + "x".repeat(5000) + "\"}");
        ChangeSourceException e = streamFails(List.of(Snapshot.begin("0c"), big, Snapshot.commit("0c")), got);
        assertTrue(e.getMessage().endsWith("sent a message over 4096 characters"), e.getMessage());
        assertTrue(noCommit(got));
    }

    @Test
    void disconnectInsideATransactionFails() throws Exception {
        initialSync();
        ChangeStream stream = source.startStream("0b", List.of());
        FakeEndpoint.Conn c = endpoint.awaitConnection();
        c.send(List.of(Snapshot.begin("0c"), Snapshot.insert("public", "items", List.of("id"), "{\"id\":2}")));
        assertEquals("begin", stream.take().type());
        assertEquals("data", stream.take().type());
        c.drop();
        ChangeSourceException e = assertThrows(ChangeSourceException.class, stream::take);
        assertFalse(e instanceof ChangeStreamClosedException);
        assertTrue(e.getMessage().contains("custom change source " + endpoint.displayName()
                + " ended the stream inside transaction 0c"), e.getMessage());
        stream.close();
    }

    @Test
    void cleanCloseBetweenTransactionsEndsTheStream() throws Exception {
        initialSync();
        ChangeStream stream = source.startStream("0b", List.of());
        FakeEndpoint.Conn c = endpoint.awaitConnection();
        c.send(List.of(Snapshot.begin("0c"), Snapshot.commit("0c")));
        c.close(1000, "bye");
        assertEquals("begin", stream.take().type());
        assertEquals("commit", stream.take().type());
        assertThrows(ChangeStreamClosedException.class, stream::take);
        stream.close();
    }

    @Test
    void abnormalCloseIsARetryableErrorWithTheReason() throws Exception {
        initialSync();
        ChangeStream stream = source.startStream("0b", List.of());
        endpoint.awaitConnection().close(4000, "source restarting");
        ChangeSourceException e = assertThrows(ChangeSourceException.class, stream::take);
        assertFalse(e instanceof ChangeStreamClosedException);
        assertTrue(e.isRetryable());
        assertEquals("custom change source " + endpoint.displayName() + " closed the connection: 4000 source restarting",
                e.getMessage());
        stream.close();
    }

    @Test
    void aSilentSocketIsTerminatedAfterOnePingInterval() throws Exception {
        try (SilentEndpoint silent = new SilentEndpoint()) {
            CustomChangeSource s = source(silent.url(),
                    new StreamSettings(Duration.ofSeconds(5), Duration.ofMillis(200), 4096, 8, 1 << 20));
            try {
                // A replica must exist for startStream; build it through the Jetty endpoint first.
                initialSync();
                s.initialize(false);
                ChangeStream stream = s.startStream("0a", List.of());
                ChangeSourceException e = assertThrows(ChangeSourceException.class,
                        () -> stream.poll(Duration.ofSeconds(10)));
                assertTrue(e.getMessage().contains("sent neither a message nor a pong for 200 ms"), e.getMessage());
                stream.close();
            } finally {
                s.stop();
            }
        }
    }
}
