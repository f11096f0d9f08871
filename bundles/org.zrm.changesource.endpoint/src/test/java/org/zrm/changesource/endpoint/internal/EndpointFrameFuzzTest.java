package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes what clients send to the custom change-source endpoint (issue 16), on real Jetty with a
 * real WebSocket client: acks of sent, unsent and malformed watermarks, status echoes, random text,
 * edited JSON and frames past the incoming bound (4 KiB here), 1 to 4 per connection.
 *
 * <p>The property: each fuzzed connection is served or closed by the server with 1002 or 1009 and
 * a reason of at most 123 bytes; its subscription is closed once the connection ends; and a
 * neighbour client, open for the whole run, receives a message pushed after every fuzzed connection.
 */
@AddLifecycleHook(FuzzTries.class)
class EndpointFrameFuzzTest {

    private static final Set<Integer> CLOSE_CODES = Set.of(1002, 1009);
    private static final String[] TOKENS = {"\"", "[", "]", "{", "}", ",", ":", "null", "true", "1e999", "\"status\"",
        "\"commit\"", "\"begin\"", "\"zz\"", "\"\"", "\\u0000", "\\ud800", " "};

    private static FakeStreamer streamer;
    private static TestServer server;
    private static TestClient neighbour;
    private static FakeStreamer.Sub neighbourSub;
    private static int pushed;
    private static int closedByServer;
    private static int served;

    @BeforeContainer
    static void start() throws Exception {
        streamer = new FakeStreamer();
        server = new TestServer(streamer);
        neighbour = new TestClient(server.url("&lastWatermark=01&replicaVersion=01"));
        neighbourSub = streamer.next();
    }

    @AfterContainer
    static void stop() throws Exception {
        neighbour.close();
        server.close();
        // Both outcomes must occur, or the generator has stopped reaching one of them.
        assertTrue(closedByServer > 0 && served > 0, "closed " + closedByServer + ", served " + served);
    }

    @Property(tries = 120)
    void aFuzzedClientIsServedOrClosedWithAReasonAndItsNeighbourGoesOn(@ForAll long seed) throws Exception {
        Random r = new Random(seed);
        TestClient c = new TestClient(server.url("&lastWatermark=01&replicaVersion=01"));
        FakeStreamer.Sub sub = streamer.next();
        try {
            // Something for acks to refer to: one transaction at 02.
            sub.push(Wire.begin("02"));
            sub.push(Wire.insert(1));
            sub.push(Wire.commit("02"));
            for (int i = 0; i < 3; i++) {
                c.next(); // so that an ack of 02 acknowledges something sent
            }
            // One try in four is a well-behaved client (one ack of what it received), so that the
            // served outcome is reached in every run: a fuzzed frame is rarely harmless, and with
            // fuzzed frames only, about one run in twenty had no served try at all (found in CI).
            boolean wellBehaved = r.nextInt(4) == 0;
            int frames = wellBehaved ? 1 : 1 + r.nextInt(4);
            List<String> sent = new java.util.ArrayList<>();
            for (int i = 0; i < frames && !c.closed.isDone(); i++) {
                String f = wellBehaved ? Wire.ack("02") : frame(r);
                sent.add(f.length() > 200 ? f.substring(0, 200) + "… (" + f.length() + " chars)" : f);
                try {
                    c.send(f);
                } catch (ExecutionException e) {
                    break; // the server closed the connection while this frame was on its way
                }
            }
            // Jetty closes the socket with the rest of a frame past the bound unread, and with frames
            // pipelined behind a rejected one unread: the client may then see a broken pipe or no
            // close frame (1006) instead of the close code (RELIABILITY.md, finding 8).
            boolean cutShort = sent.size() > 1 || sent.stream().anyMatch(f -> f.endsWith(" chars)"));
            try {
                TestClient.Close close = c.closed.get(100, TimeUnit.MILLISECONDS);
                assertTrue(!wellBehaved, "a well-behaved client was closed: " + close);
                assertTrue(CLOSE_CODES.contains(close.code()) || (cutShort && close.code() == 1006),
                        "close " + close + " after " + sent);
                assertTrue(close.reason().getBytes(StandardCharsets.UTF_8).length <= 123, "reason over 123 bytes");
                assertTrue(close.code() == 1006 || !close.reason().isBlank(), "a close without a reason after " + sent);
                closedByServer++;
            } catch (TimeoutException e) {
                served++; // nothing it sent was wrong enough to close it
            } catch (ExecutionException e) {
                assertTrue(cutShort, "a broken connection after " + sent + ": " + e.getCause());
                closedByServer++;
            }
        } finally {
            c.close();
        }
        assertTrue(sub.closed.await(5, TimeUnit.SECONDS), "the fuzzed connection's subscription was not closed");

        String marker = Wire.begin(String.format("%08d", 10 + pushed++));
        neighbourSub.push(marker);
        assertEquals(marker, neighbour.next(), "the neighbour missed a message");
        // The neighbour's transaction stays open across tries; the fake streamer does not check order.
    }

    private static String frame(Random r) {
        String base = switch (r.nextInt(5)) {
            case 0 -> Wire.ack("02");
            case 1 -> Wire.ack(r.nextBoolean() ? "03" : "01");
            case 2 -> Wire.status();
            case 3 -> "[\"status\",{\"tag\":\"commit\"},{\"watermark\":" + r.nextInt() + "}]";
            default -> List.of("{}", "[]", "null", "not json", "[\"begin\",{\"tag\":\"begin\"},{}]").get(r.nextInt(5));
        };
        return switch (r.nextInt(6)) {
            case 0 -> base;
            case 1 -> {
                int at = r.nextInt(base.length() + 1);
                yield base.substring(0, at) + TOKENS[r.nextInt(TOKENS.length)] + base.substring(at);
            }
            case 2 -> base.substring(0, r.nextInt(base.length() + 1));
            case 3 -> base + " ".repeat(4096 + r.nextInt(1000));
            case 4 -> {
                int a = r.nextInt(base.length() + 1);
                int b = Math.min(base.length(), a + 1 + r.nextInt(6));
                yield base.substring(0, a) + base.substring(b);
            }
            default -> {
                StringBuilder s = new StringBuilder();
                int n = 1 + r.nextInt(40);
                for (int i = 0; i < n; i++) {
                    s.append((char) (r.nextBoolean() ? 32 + r.nextInt(95) : r.nextInt(0xD7FF)));
                }
                yield s.toString();
            }
        };
    }
}
