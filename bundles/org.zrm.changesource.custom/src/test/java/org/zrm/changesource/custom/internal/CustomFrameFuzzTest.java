package org.zrm.changesource.custom.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.RollbackMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes what a custom change source sends (issue 16): a valid stream of the custom protocol's
 * frames, mutated (characters and ranges edited, frames dropped, duplicated, swapped, split into
 * fragments, replaced by binary, ping or close frames, or grown past {@code maxMessageChars}), fed
 * through the client's WebSocket listener as the JDK would.
 *
 * <p>The property: no listener callback throws; the stream yields messages and then, at most, one
 * typed {@link ChangeSourceException} that every later pull repeats; what it yields is always a
 * well-formed sequence (begin..commit pairs, watermarks increasing), whatever was sent; a protocol
 * violation aborts the socket. Each case runs within a bound, and a second stream fed the valid
 * frames afterwards yields them exactly (no state leaks between streams).
 */
@AddLifecycleHook(FuzzTries.class)
class CustomFrameFuzzTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    private static final int MAX_MESSAGE_CHARS = 4096;
    private static final Duration BOUND = Duration.ofSeconds(5);
    private static int failed;
    private static int clean;

    private static final List<String> VALID = List.of(
            "[\"status\",{\"ack\":true},{\"watermark\":\"01\"}]",
            Snapshot.begin("02"),
            Snapshot.insert("public", "items", List.of("id"), "{\"id\":1,\"title\":\"a\"}"),
            "[\"data\",{\"tag\":\"update\",\"relation\":{\"schema\":\"public\",\"name\":\"items\",\"rowKey\":{\"columns\":[\"id\"]}},"
                    + "\"key\":null,\"new\":{\"id\":1,\"title\":\"b\"}}]",
            Snapshot.commit("02"),
            Snapshot.begin("03"),
            "[\"data\",{\"tag\":\"delete\",\"relation\":{\"schema\":\"public\",\"name\":\"items\",\"rowKey\":{\"columns\":[\"id\"]}},"
                    + "\"key\":{\"id\":1}}]",
            "[\"rollback\",{\"tag\":\"rollback\"}]",
            Snapshot.begin("04"),
            Snapshot.insert("public", "items", List.of("id"), "{\"id\":2,\"title\":\"\\u00e9\"}"),
            Snapshot.commit("04"),
            "[\"status\",{\"ack\":true},{\"watermark\":\"04\"}]");

    private static final String[] TOKENS = {"\"", "[", "]", "{", "}", ",", ":", "null", "true", "-1", "1e999",
        "\"begin\"", "\"commit\"", "\"data\"", "\"status\"", "\"rollback\"", "\"control\"", "\"00\"", "\"zz\"", "\\u0000",
        "\\ud800", "\u2028", " "};

    /** One thing the source does on the socket. */
    private sealed interface Frame permits Text, Binary, Ping, Close {
    }

    private record Text(String text, int fragments) implements Frame {
    }

    private record Binary() implements Frame {
    }

    private record Ping() implements Frame {
    }

    private record Close(int code) implements Frame {
    }

    @Property(tries = 400)
    void anyFrameSequenceYieldsAWellFormedStreamAndAtMostOneTypedError(@ForAll long seed) throws Exception {
        List<Frame> frames = mutate(new Random(seed));
        long deadline = System.nanoTime() + BOUND.toNanos();
        CustomChangeStreamTest.StubSocket ws = new CustomChangeStreamTest.StubSocket();
        CustomChangeStream stream = stream(ws);
        List<ChangeStreamMessage> got = new ArrayList<>();
        ChangeSourceException error = null;
        for (Frame f : frames) {
            feed(stream.listener(), ws, f); // throws nothing, or the property fails with it
            // Pull as a consumer would, so that the read-ahead credits keep flowing.
            error = drain(stream, got, error);
        }
        error = drain(stream, got, error);
        assertTrue(System.nanoTime() < deadline, "over " + BOUND + " for " + frames.size() + " frames");
        assertWellFormed(got);
        if (error == null) {
            clean++;
        } else {
            failed++;
        }
        if (error != null) {
            ChangeSourceException again = pullError(stream);
            assertEquals(error.getMessage(), again.getMessage(), "a later pull repeats the error");
            if (error.getMessage().contains("broke the protocol") || error.getMessage().contains("invalid message")
                    || error.getMessage().contains("binary frame") || error.getMessage().contains("over "
                            + MAX_MESSAGE_CHARS)) {
                assertTrue(ws.aborted, "a misbehaving source's socket is aborted: " + error.getMessage());
            }
        }

        CustomChangeStreamTest.StubSocket fresh = new CustomChangeStreamTest.StubSocket();
        CustomChangeStream neighbour = stream(fresh);
        List<ChangeStreamMessage> clean = new ArrayList<>();
        for (String v : VALID) {
            feed(neighbour.listener(), fresh, new Text(v, 1));
        }
        assertEquals(null, drain(neighbour, clean, null));
        assertEquals(VALID.size(), clean.size());
    }

    @net.jqwik.api.lifecycle.AfterContainer
    static void bothOutcomesOccurred() {
        // Or the mutations have stopped reaching one of them.
        assertTrue(failed > 0 && clean > 0, "failed " + failed + ", clean " + clean);
    }

    private static CustomChangeStream stream(CustomChangeStreamTest.StubSocket ws) {
        CustomChangeStream s = CustomChangeStream.attached(ws, "ws://fuzz/changes", CODEC,
                new StreamSettings(Duration.ofSeconds(1), Duration.ofSeconds(30), MAX_MESSAGE_CHARS, 64, 1 << 20), "00");
        s.listener().onOpen(ws);
        return s;
    }

    private static void feed(WebSocket.Listener l, WebSocket ws, Frame f) {
        if (f instanceof Text t) {
            int n = Math.max(1, Math.min(t.fragments(), t.text().length()));
            int step = Math.max(1, t.text().length() / n);
            int at = 0;
            for (int i = 0; i < n - 1 && at + step < t.text().length(); i++, at += step) {
                l.onText(ws, t.text().substring(at, at + step), false);
            }
            l.onText(ws, t.text().substring(at), true);
        } else if (f instanceof Binary) {
            l.onBinary(ws, ByteBuffer.wrap(new byte[] {1, 2, 3}), true);
        } else if (f instanceof Ping) {
            l.onPing(ws, ByteBuffer.allocate(0));
        } else if (f instanceof Close c) {
            l.onClose(ws, c.code(), "fuzz");
        }
    }

    /** Pulls what is ready; returns the stream's error once it has one. */
    private static ChangeSourceException drain(CustomChangeStream s, List<ChangeStreamMessage> got,
            ChangeSourceException error) throws InterruptedException {
        if (error != null) {
            return error;
        }
        while (true) {
            try {
                ChangeStreamMessage m = s.poll(Duration.ZERO);
                if (m == null) {
                    return null;
                }
                got.add(m);
            } catch (ChangeSourceException e) {
                return e;
            }
        }
    }

    private static ChangeSourceException pullError(CustomChangeStream s) throws InterruptedException {
        try {
            ChangeStreamMessage m = s.poll(Duration.ZERO);
            throw new AssertionError("a message after the stream's error: " + m);
        } catch (ChangeSourceException e) {
            assertNotNull(e.getMessage());
            return e;
        }
    }

    /** Begin..commit (or rollback) pairs, data only inside, commit watermarks increasing. */
    private static void assertWellFormed(List<ChangeStreamMessage> got) {
        String open = null;
        String last = "00";
        for (ChangeStreamMessage m : got) {
            if (m instanceof BeginMessage b) {
                assertEquals(null, open, "begin inside a transaction passed: " + got);
                assertTrue(b.commitWatermark().compareTo(last) > 0, "non-increasing begin passed: " + got);
                open = b.commitWatermark();
            } else if (m instanceof CommitMessage c) {
                assertEquals(open, c.watermark(), "unmatched commit passed: " + got);
                last = open;
                open = null;
            } else if (m instanceof RollbackMessage) {
                assertNotNull(open, "rollback without begin passed: " + got);
                open = null;
            } else if (m instanceof ChangeStreamMessage.DataMessage) {
                assertNotNull(open, "data outside a transaction passed: " + got);
            }
        }
    }

    private static List<Frame> mutate(Random r) {
        List<Frame> frames = new ArrayList<>();
        for (String v : VALID) {
            frames.add(new Text(v, 1));
        }
        int edits = 1 + r.nextInt(6);
        for (int i = 0; i < edits; i++) {
            int at = r.nextInt(frames.size());
            Frame f = frames.get(at);
            String text = f instanceof Text t ? t.text() : VALID.get(r.nextInt(VALID.size()));
            switch (r.nextInt(12)) {
                case 0 -> frames.remove(at);
                case 1 -> frames.add(at, f);
                case 2 -> {
                    int other = r.nextInt(frames.size());
                    frames.set(at, frames.get(other));
                    frames.set(other, f);
                }
                case 3 -> frames.set(at, new Text(text, 2 + r.nextInt(6)));
                case 4 -> frames.set(at, new Text(text.substring(0, r.nextInt(text.length() + 1)), 1));
                case 5 -> {
                    int a = r.nextInt(text.length() + 1);
                    frames.set(at, new Text(text.substring(0, a) + TOKENS[r.nextInt(TOKENS.length)] + text.substring(a), 1));
                }
                case 6 -> {
                    int a = r.nextInt(text.length() + 1);
                    int b = Math.min(text.length(), a + 1 + r.nextInt(8));
                    frames.set(at, new Text(text.substring(0, a) + text.substring(b), 1));
                }
                case 7 -> frames.set(at, new Text(text.replaceFirst("\"0[1-4]\"",
                        "\"0" + r.nextInt(6) + "\""), 1));
                case 8 -> frames.set(at, new Text(text.replace("\"title\":\"", "\"title\":\""
                        + "x".repeat(MAX_MESSAGE_CHARS)), 1 + r.nextInt(3)));
                case 9 -> frames.add(at, new Binary());
                case 10 -> frames.add(at, new Ping());
                default -> frames.add(at, new Close(r.nextBoolean() ? WebSocket.NORMAL_CLOSURE : 1011));
            }
            if (frames.isEmpty()) {
                frames.add(new Text(VALID.get(0), 1));
            }
        }
        return frames;
    }
}
