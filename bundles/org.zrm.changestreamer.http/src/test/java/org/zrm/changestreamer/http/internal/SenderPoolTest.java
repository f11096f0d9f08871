package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.zrm.changestreamer.http.internal.FakeChangeStreamer.FakeSubscription;

/**
 * The sender threads are shared by every connection (issue: fan-out performance, item 2), so a
 * client that stops acknowledging must not hold one: zero saw one mildly slow subscriber cut the
 * healthy ones from about 2,000 to 48 messages/s. With a single sender thread and a small window,
 * a client that acks nothing gets its window's worth while another receives everything; once it
 * acks, it gets the rest.
 */
class SenderPoolTest {

    private static final String CHANGES = "/replication/v6/changes";
    private static final int MESSAGES = 500;
    private static final long WINDOW_CHARS = 2_000;

    private static String query(String id) {
        return "?id=" + id + "&taskID=task-" + id + "&mode=serving&replicaVersion=abc&watermark=123&initial=false";
    }

    @Test
    void aClientThatStopsAckingHoldsNoSenderThread() throws Exception {
        Settings settings = Settings.DEFAULTS.withSenderThreads(1).withMaxUnackedChars(WINDOW_CHARS);
        String body = "[\"data\",{\"tag\":\"insert\",\"pad\":\"" + "x".repeat(80) + "\"}]";
        long frameChars = ("{\"id\":" + MESSAGES + ",\"msg\":" + body + "}").length();
        try (TestServer server = new TestServer(settings);
                TestClient slow = new TestClient(server.ws(CHANGES + query("slow")))) {
            FakeSubscription slowSub = server.streamer.nextSubscription();
            try (TestClient fast = new TestClient(server.ws(CHANGES + query("fast")))) {
                FakeSubscription fastSub = server.streamer.nextSubscription();
                for (int i = 0; i < MESSAGES; i++) {
                    slowSub.push(body);
                    fastSub.push(body);
                }
                for (int id = 1; id <= MESSAGES; id++) {
                    String frame = fast.next();
                    assertTrue(frame.startsWith("{\"id\":" + id + ","), frame);
                    fast.ack(id);
                }
                int slowGot = slow.messages.size();
                assertTrue(slowGot <= WINDOW_CHARS / frameChars + 1,
                        "the silent client got only its window's worth while the other got " + MESSAGES + ": "
                                + slowGot);
                for (int id = 1; id <= MESSAGES; id++) {
                    String frame = slow.next();
                    assertTrue(frame.startsWith("{\"id\":" + id + ","), frame);
                    slow.ack(id);
                }
                assertEquals(2L * MESSAGES, server.metrics.framesSent());
            }
        }
    }

    /**
     * A connection with a deep backlog takes turns ({@link ChangesConnection#DRAIN_BUDGET_CHARS}):
     * with one sender thread and windows far larger than the backlog, a message for another
     * connection goes out while most of the backlog is still waiting, not after all of it.
     */
    @Test
    void aDeepBacklogTakesTurnsWithTheOtherConnections() throws Exception {
        Settings settings = Settings.DEFAULTS.withSenderThreads(1).withMaxUnackedChars(1L << 30)
                .withMaxQueuedChars(1L << 30);
        String body = "[\"data\",{\"tag\":\"insert\",\"pad\":\"" + "x".repeat(80) + "\"}]";
        int backlog = 200_000;
        try (TestServer server = new TestServer(settings);
                TestClient deep = new TestClient(server.ws(CHANGES + query("deep")))) {
            FakeSubscription deepSub = server.streamer.nextSubscription();
            try (TestClient other = new TestClient(server.ws(CHANGES + query("other")))) {
                FakeSubscription otherSub = server.streamer.nextSubscription();
                // All at once: with a signal per message the sender drained the backlog while it
                // was still being pushed, and the test measured the pushing, not the turns.
                deepSub.pushAll(java.util.Collections.nCopies(backlog, body));
                otherSub.push(body);
                assertTrue(other.next().startsWith("{\"id\":1,"));
                int left = deepSub.untaken();
                assertTrue(left > backlog / 2, "the other connection's frame waited for one turn of the backlog, not"
                        + " for all of it: " + left + " of " + backlog + " still untaken");
            }
        }
    }
}
