package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes the endpoint's configuration validation ({@link Settings#of}) with extreme and random
 * values (issue #16, fuzzed inputs): a configuration is either accepted with exactly its values or
 * rejected with an {@link IllegalArgumentException} naming the property, never another exception.
 */
@AddLifecycleHook(FuzzTries.class)
class SettingsFuzzTest {

    @Provide
    Arbitrary<Long> values() {
        return Arbitraries.oneOf(Arbitraries.of(Long.MIN_VALUE, -1L, 0L, 1L, 63L, 64L, 65L, Long.MAX_VALUE,
                (long) Integer.MAX_VALUE + 1, Long.MAX_VALUE / 1000 + 1), Arbitraries.longs());
    }

    @Provide
    Arbitrary<Integer> threads() {
        return Arbitraries.oneOf(Arbitraries.of(Integer.MIN_VALUE, -1, 0, 1, 2, 256, 257, Integer.MAX_VALUE),
                Arbitraries.integers());
    }

    @Property(tries = 2000)
    void configurationIsAcceptedOrRejectedNamingTheProperty(@ForAll("values") long pingMs, @ForAll("values") long unacked,
            @ForAll("values") long queued, @ForAll("values") long incoming, @ForAll("threads") int threads) {
        Map<String, Object> values = Map.of("ping_intervalMs", pingMs, "send_maxUnackedChars", unacked,
                "send_maxQueuedChars", queued, "receive_maxMessageBytes", incoming, "send_threads", threads);
        ChangeStreamerHttpConfig config = (ChangeStreamerHttpConfig) Proxy.newProxyInstance(
                ChangeStreamerHttpConfig.class.getClassLoader(), new Class<?>[] {ChangeStreamerHttpConfig.class},
                (proxy, method, args) -> values.get(method.getName()));
        Settings settings;
        try {
            settings = Settings.of(config);
        } catch (IllegalArgumentException e) {
            String m = e.getMessage();
            assertTrue(m.startsWith("ping.intervalMs ") || m.startsWith("send.maxUnackedChars ")
                    || m.startsWith("send.maxQueuedChars ") || m.startsWith("receive.maxMessageBytes ")
                    || m.startsWith("send.threads "), m);
            return;
        }
        assertEquals(pingMs, settings.pingInterval().toMillis());
        assertEquals(unacked, settings.maxUnackedChars());
        assertEquals(queued, settings.maxQueuedChars());
        assertEquals(incoming, settings.maxIncomingMessageBytes());
        assertEquals(threads == 0 ? Settings.perProcessor(0) : threads, settings.senderThreads());
        assertTrue(settings.idleTimeout().toMillis() > 0, "idle timeout " + settings.idleTimeout());
    }

    /**
     * Found by this fuzzer: a ping interval above Long.MAX_VALUE / 3 ms was accepted, and Jetty's
     * idle timeout (three intervals, in ms) then overflowed on the servlet's first request.
     */
    @net.jqwik.api.Example
    void pingIntervalWhoseIdleTimeoutOverflowsIsRejected() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Settings.DEFAULTS.withPingInterval(java.time.Duration.ofMillis(Long.MAX_VALUE / 3 + 1)));
        assertTrue(e.getMessage().startsWith("ping.intervalMs must be at most "), e.getMessage());
        assertEquals(Long.MAX_VALUE / 3 * 3,
                Settings.DEFAULTS.withPingInterval(java.time.Duration.ofMillis(Long.MAX_VALUE / 3)).idleTimeout().toMillis());
    }
}
