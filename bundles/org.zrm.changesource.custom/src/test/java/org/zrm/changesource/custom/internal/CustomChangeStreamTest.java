package org.zrm.changesource.custom.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.json.ProtocolCodec;

/** Ack coalescing and read-ahead bounds, against a socket whose sends and credits the test sees. */
class CustomChangeStreamTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    /** Records sends (completed only when the test says so) and requested credits. */
    static final class StubSocket implements WebSocket {
        final List<String> sent = new ArrayList<>();
        final List<CompletableFuture<WebSocket>> pending = new ArrayList<>();
        long credits;
        boolean aborted;

        @Override
        public synchronized CompletableFuture<WebSocket> sendText(CharSequence data, boolean last) {
            sent.add(data.toString());
            CompletableFuture<WebSocket> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }

        @Override
        public CompletableFuture<WebSocket> sendBinary(ByteBuffer data, boolean last) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<WebSocket> sendPing(ByteBuffer message) {
            return CompletableFuture.completedFuture(this);
        }

        @Override
        public CompletableFuture<WebSocket> sendPong(ByteBuffer message) {
            return CompletableFuture.completedFuture(this);
        }

        @Override
        public CompletableFuture<WebSocket> sendClose(int statusCode, String reason) {
            return CompletableFuture.completedFuture(this);
        }

        @Override
        public synchronized void request(long n) {
            credits += n;
        }

        @Override
        public String getSubprotocol() {
            return "";
        }

        @Override
        public boolean isOutputClosed() {
            return false;
        }

        @Override
        public boolean isInputClosed() {
            return false;
        }

        @Override
        public void abort() {
            aborted = true;
        }

        synchronized CompletableFuture<WebSocket> pending(int i) {
            return pending.get(i);
        }
    }

    private static ChangeSourceUpstream ack(String w) {
        return CODEC.decodeChangeSourceUpstream("[\"status\",{\"tag\":\"commit\"},{\"watermark\":\"" + w + "\"}]");
    }

    private static CustomChangeStream stream(StubSocket ws, int bufferMessages, long bufferChars) {
        return CustomChangeStream.attached(ws, "ws://src/changes", CODEC,
                new StreamSettings(Duration.ofSeconds(1), Duration.ofSeconds(30), 10_000, bufferMessages, bufferChars), "00");
    }

    @Test
    void acksCoalesceToTheLatestWhileOneIsInFlight() {
        StubSocket ws = new StubSocket();
        CustomChangeStream s = stream(ws, 4, 1 << 20);
        s.ack(ack("01"));
        s.ack(ack("02"));
        s.ack(ack("03"));
        s.ack(ack("04"));
        assertEquals(List.of(CODEC.encode(ack("01"))), ws.sent, "one send at a time");
        ws.pending(0).complete(ws);
        assertEquals(List.of(CODEC.encode(ack("01")), CODEC.encode(ack("04"))), ws.sent, "only the latest waiting ack");
        ws.pending(1).complete(ws);
        assertEquals(2, ws.sent.size(), "nothing else was waiting");
        s.ack(ack("05"));
        assertEquals(CODEC.encode(ack("05")), ws.sent.get(2), "idle again: sent at once");
    }

    @Test
    void aFailedAckSendFailsTheStream() {
        StubSocket ws = new StubSocket();
        CustomChangeStream s = stream(ws, 4, 1 << 20);
        s.ack(ack("01"));
        ws.pending(0).completeExceptionally(new java.io.IOException("broken pipe"));
        ChangeSourceException e = assertThrows(ChangeSourceException.class, s::take);
        assertTrue(e.getMessage().startsWith("sending ack to custom change source ws://src/changes failed"), e.getMessage());
        assertTrue(ws.aborted);
    }

    private static String status(String w) {
        return "[\"status\",{\"ack\":true},{\"watermark\":\"" + w + "\"}]";
    }

    @Test
    void readAheadStopsAtTheMessageBound() throws Exception {
        StubSocket ws = new StubSocket();
        CustomChangeStream s = stream(ws, 3, 1 << 20);
        s.listener().onOpen(ws);
        assertEquals(3, ws.credits, "three frames requested ahead");
        for (int i = 1; i <= 3; i++) {
            s.listener().onText(ws, status("0" + i), true);
        }
        assertEquals(3, ws.credits, "no more requested while three wait");
        assertEquals("status", s.take().type());
        assertEquals(4, ws.credits, "one taken, one more requested");
    }

    @Test
    void readAheadStopsAtTheCharacterBoundUntilTheBufferDrains() throws Exception {
        StubSocket ws = new StubSocket();
        int size = status("01").length();
        CustomChangeStream s = stream(ws, 10, size * 2L); // two messages fill the character bound
        s.listener().onOpen(ws);
        for (int i = 1; i <= 3; i++) {
            s.listener().onText(ws, status("0" + i), true);
        }
        s.take(); // 2 messages = the bound still buffered: the credit is deferred
        assertEquals(10, ws.credits);
        s.take(); // 1 left: below the bound, both deferred credits are granted
        assertEquals(12, ws.credits);
        s.take();
        assertEquals(13, ws.credits);
        assertNull(s.poll(Duration.ZERO));
    }

    @Test
    void fragmentsAreJoinedAndDoNotUseASlot() throws Exception {
        StubSocket ws = new StubSocket();
        CustomChangeStream s = stream(ws, 3, 1 << 20);
        s.listener().onOpen(ws);
        String m = status("01");
        s.listener().onText(ws, m.substring(0, 5), false);
        assertEquals(4, ws.credits);
        s.listener().onText(ws, m.substring(5), true);
        assertEquals(m, CODEC.encode(s.take()));
    }

    @Test
    void aBinaryFrameFailsTheStream() {
        StubSocket ws = new StubSocket();
        CustomChangeStream s = stream(ws, 3, 1 << 20);
        s.listener().onBinary(ws, ByteBuffer.allocate(1), true);
        assertEquals("custom change source ws://src/changes sent a binary frame",
                assertThrows(ChangeSourceException.class, s::take).getMessage());
        assertTrue(ws.aborted);
    }
}
