package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.protocol.json.ProtocolCodec;

class StreamForwarderTest {

    /** Frames "written" at once unless {@link #hold} is set; then the callbacks wait in {@link #held}. */
    static final class ListOutbound implements Outbound {
        final List<String> frames = new CopyOnWriteArrayList<>();
        final List<Runnable> held = new CopyOnWriteArrayList<>();
        volatile boolean hold;

        @Override
        public void send(String text, Runnable written) {
            frames.add(text);
            if (hold) {
                held.add(written);
            } else {
                written.run();
            }
        }

        @Override
        public void close(int code, String reason) {
        }
    }

    private final ExecutorService pool = Executors.newSingleThreadExecutor();
    private final ListOutbound out = new ListOutbound();
    private final FakeStreamer.Sub sub = new FakeStreamer.Sub(
            new SubscriberContext(6, "t", null, ReplicatorMode.SERVING, "01", "01", false));

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private StreamForwarder forwarder(long window) {
        return new StreamForwarder("test", new ProtocolCodec(), out, window, "01");
    }

    private void awaitFrames(int n) throws InterruptedException {
        for (int i = 0; i < 1000 && out.frames.size() < n; i++) {
            Thread.sleep(5); // test-only wait for the pump thread; no signal exists in the list
        }
        assertEquals(n, out.frames.size(), out.frames.toString());
    }

    @Test
    void forwardsChangesVerbatimAndDropsStreamerStatus() throws Exception {
        StreamForwarder f = forwarder(1 << 20);
        sub.push(Wire.status());
        String big = "[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\",\"name\":\"t\",\"rowKey\":"
                + "{\"columns\":[\"id\"]}},\"new\":{\"id\":9007199254740993}}]";
        sub.push(Wire.begin("02"));
        sub.push(big);
        sub.push(Wire.commit("02"));
        sub.end();
        Rejection end = f.pump(sub);
        assertEquals(List.of(Wire.begin("02"), big, Wire.commit("02")), out.frames);
        assertEquals(Reason.UNAVAILABLE, end.reason()); // the stream ended: the client reconnects
        assertEquals("02", f.sentWatermark());
    }

    @Test
    void aCommitIsConsumedOnlyWhenTheClientAcksIt() throws Exception {
        StreamForwarder f = forwarder(1 << 20);
        FakeStreamer.Msg status = sub.push(Wire.status());
        FakeStreamer.Msg b = sub.push(Wire.begin("02"));
        FakeStreamer.Msg d = sub.push(Wire.insert(1));
        FakeStreamer.Msg c = sub.push(Wire.commit("02"));
        FakeStreamer.Msg b2 = sub.push(Wire.begin("03"));
        FakeStreamer.Msg c2 = sub.push(Wire.commit("03"));
        Future<Rejection> pump = pool.submit(() -> f.pump(sub));
        awaitFrames(5);
        assertTrue(status.isConsumed() && b.isConsumed() && d.isConsumed());
        assertFalse(c.isConsumed(), "commit consumed before the client stored it");
        assertFalse(b2.isConsumed(), "the next transaction must wait behind the unacked commit");
        f.onUpstream(Wire.ack("02"));
        assertTrue(c.isConsumed() && b2.isConsumed());
        assertFalse(c2.isConsumed());
        assertEquals("02", f.ackedWatermark());
        // A coalesced ack covers everything up to it.
        f.onUpstream(Wire.ack("03"));
        assertTrue(c2.isConsumed());
        assertNull(sub.outOfOrder);
        f.end();
        sub.close();
        assertNull(pump.get(10, TimeUnit.SECONDS));
    }

    @Test
    void messagesAreConsumedOnlyOnceWritten() throws Exception {
        out.hold = true;
        StreamForwarder f = forwarder(1 << 20);
        FakeStreamer.Msg b = sub.push(Wire.begin("02"));
        FakeStreamer.Msg c = sub.push(Wire.commit("02"));
        Future<Rejection> pump = pool.submit(() -> f.pump(sub));
        awaitFrames(2);
        f.onUpstream(Wire.ack("02"));
        assertFalse(b.isConsumed());
        out.held.forEach(Runnable::run);
        assertTrue(b.isConsumed() && c.isConsumed());
        f.end();
        sub.close();
        pump.get(10, TimeUnit.SECONDS);
    }

    @Test
    void theByteWindowStopsTakingMessagesUntilFramesAreWritten() throws Exception {
        out.hold = true;
        StreamForwarder f = forwarder(Wire.begin("02").length() + 1);
        sub.push(Wire.begin("02"));
        sub.push(Wire.insert(1));
        Future<Rejection> pump = pool.submit(() -> f.pump(sub));
        awaitFrames(1);
        Thread.sleep(100); // nothing must be sent while the first frame is unwritten
        assertEquals(1, out.frames.size());
        out.held.get(0).run();
        awaitFrames(2);
        f.end();
        sub.close();
        pump.get(10, TimeUnit.SECONDS);
    }

    @Test
    void badAcksAreProtocolErrors() throws Exception {
        StreamForwarder f = forwarder(1 << 20);
        Rejection garbage = assertThrows(Rejection.class, () -> f.onUpstream("{not json"));
        assertEquals(Reason.PROTOCOL, garbage.reason());
        assertTrue(garbage.getMessage().startsWith("invalid upstream message: "), garbage.getMessage());
        Rejection unknown = assertThrows(Rejection.class, () -> f.onUpstream("[\"hello\",{}]"));
        assertEquals(Reason.PROTOCOL, unknown.reason());
        Rejection beyond = assertThrows(Rejection.class, () -> f.onUpstream(Wire.ack("09")));
        assertEquals("ack of watermark 09 beyond the last sent commit 01", beyond.getMessage());
    }

    @Test
    void streamerErrorsBecomeResetRequired() throws Exception {
        StreamForwarder f = forwarder(1 << 20);
        sub.push("[\"error\",{\"type\":2,\"message\":\"watermark 02 is too old\"}]");
        Rejection r = f.pump(sub);
        assertEquals(Reason.RESET_REQUIRED, r.reason());
        assertEquals("watermark 02 is too old", r.getMessage());
        assertTrue(out.frames.isEmpty());
    }
}
