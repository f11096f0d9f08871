package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.changelog.StorerListener;

/** Configuration of PID org.zrm.changestreamer: conversion to settings and rejection of bad values. */
class ChangeStreamerConfigTest {

    /** A config whose methods return {@code values[name]} or the OCD default, as DS builds it. */
    static ChangeStreamerConfig config(Object... nameValuePairs) {
        Map<String, Object> values = new HashMap<>();
        for (int i = 0; i < nameValuePairs.length; i += 2) {
            values.put((String) nameValuePairs[i], nameValuePairs[i + 1]);
        }
        return (ChangeStreamerConfig) Proxy.newProxyInstance(ChangeStreamerConfig.class.getClassLoader(),
                new Class<?>[] {ChangeStreamerConfig.class}, (proxy, method, args) -> {
                    if (values.containsKey(method.getName())) {
                        return values.get(method.getName());
                    }
                    if (method.getDefaultValue() != null) {
                        return method.getDefaultValue();
                    }
                    if (method.getName().equals("annotationType")) {
                        return ChangeStreamerConfig.class;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    /** Never used: activation must fail before the streamer touches storage. */
    private static final StorerFactory UNUSED = new StorerFactory() {
        @Override
        public Storer start(String taskID, StorerListener listener, CatchupHandler catchup) {
            throw new AssertionError("no storer may be started for a rejected configuration");
        }

        @Override
        public ChangeLog changeLog() {
            throw new AssertionError("the change log must not be touched for a rejected configuration");
        }
    };

    /** A bundle context without framework properties (only getProperty is called at activation). */
    private static final org.osgi.framework.BundleContext NO_PROPERTIES = (org.osgi.framework.BundleContext)
            java.lang.reflect.Proxy.newProxyInstance(ChangeStreamerConfigTest.class.getClassLoader(),
                    new Class<?>[] {org.osgi.framework.BundleContext.class}, (proxy, method, args) -> {
                        if (method.getName().equals("getProperty")) {
                            return null;
                        }
                        throw new UnsupportedOperationException(method.getName());
                    });

    private static IllegalArgumentException rejected(ChangeStreamerConfig c) {
        return assertThrows(IllegalArgumentException.class, () -> ChangeStreamerComponent.settings(c));
    }

    private static void activationFailsNaming(String property, Object... nameValuePairs) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ChangeStreamerComponent(config(nameValuePairs), UNUSED, NO_PROPERTIES, Map.of()));
        assertTrue(e.getMessage().contains(property), e.getMessage());
        assertTrue(e.getMessage().contains(ChangeStreamerComponent.PID), e.getMessage());
    }

    @Test
    void defaultOwnerAddressUsesTheChangeStreamerPort() {
        StreamerSettings s = ChangeStreamerComponent.settings(config(), 14849);
        assertTrue(s.ownerAddress().endsWith(":14849"), s.ownerAddress());
    }

    @Test
    void defaultsFollowZeroCache() throws Exception {
        StreamerSettings s = ChangeStreamerComponent.settings(config());
        assertTrue(s.autoReset(), "ZERO_AUTO_RESET defaults to true");
        assertEquals(Boolean.TRUE, ChangeStreamerConfig.class.getMethod("autoReset").getDefaultValue());
        assertEquals(Duration.ofMillis(15_000), s.startupDelay());
        assertEquals(1.0, s.flowControlConsensusPaddingSeconds());
        assertEquals(StreamerSettings.DEFAULT_SUBSCRIBER_MAX_BUFFERED_BYTES, s.subscriberMaxBufferedBytes());
        assertEquals(4, s.catchupThreads());
        assertEquals(Duration.ofSeconds(30), s.cleanupDelay());
        assertEquals(StreamerSettings.FLUSH_BYTES_THRESHOLD, s.flushBytesThreshold());
        assertTrue(s.ownerAddress().endsWith(":4849"), s.ownerAddress());
        assertFalse(s.ownerAddress().contains("://"), "ws addresses are published without a scheme");
        UUID.fromString(s.taskID()); // a random id per activation when task.id is empty
        assertFalse(s.taskID().equals(ChangeStreamerComponent.settings(config()).taskID()));
    }

    @Test
    void valuesAreConverted() {
        StreamerSettings s = ChangeStreamerComponent.settings(config("task_id", " node-1 ",
                "changeStreamer_address", " cs.example:7000 ", "changeStreamer_protocol", "wss", "autoReset", false,
                "changeStreamer_startupDelayMs", 0L, "changeStreamer_subscriberMaxBufferedBytes", 1L << 20,
                "changeStreamer_flowControlConsensusPaddingSeconds", -1.0, "changeStreamer_catchupThreads", 2));
        assertEquals("node-1", s.taskID());
        assertEquals("wss://cs.example:7000", s.ownerAddress());
        assertFalse(s.autoReset());
        assertEquals(Duration.ZERO, s.startupDelay());
        assertEquals(1L << 20, s.subscriberMaxBufferedBytes());
        assertEquals(-1.0, s.flowControlConsensusPaddingSeconds());
        assertEquals(2, s.catchupThreads());
        assertEquals("cs.example:7000",
                ChangeStreamerComponent.settings(config("changeStreamer_address", "cs.example:7000")).ownerAddress());
    }

    @Test
    void negativeStartupDelayIsRejected() {
        assertTrue(rejected(config("changeStreamer_startupDelayMs", -1L)).getMessage()
                .contains("changeStreamer.startupDelayMs"));
        activationFailsNaming("changeStreamer.startupDelayMs", "changeStreamer_startupDelayMs", -1L);
    }

    @Test
    void subscriberBoundBelowMinimumIsRejected() {
        long min = StreamerSettings.MIN_SUBSCRIBER_MAX_BUFFERED_BYTES;
        assertEquals(131072, min, "the documented minimum in the OCD");
        ChangeStreamerComponent.settings(config("changeStreamer_subscriberMaxBufferedBytes", min));
        IllegalArgumentException e = rejected(config("changeStreamer_subscriberMaxBufferedBytes", min - 1));
        assertTrue(e.getMessage().contains("changeStreamer.subscriberMaxBufferedBytes"), e.getMessage());
        assertTrue(e.getMessage().contains("131072"), e.getMessage());
        activationFailsNaming("changeStreamer.subscriberMaxBufferedBytes", "changeStreamer_subscriberMaxBufferedBytes", 1L);
    }

    @Test
    void zeroCatchupThreadsIsRejected() {
        assertTrue(rejected(config("changeStreamer_catchupThreads", 0)).getMessage()
                .contains("changeStreamer.catchupThreads"));
        activationFailsNaming("changeStreamer.catchupThreads", "changeStreamer_catchupThreads", 0);
    }

    @Test
    void unknownProtocolIsRejected() {
        assertTrue(rejected(config("changeStreamer_protocol", "http")).getMessage().contains("changeStreamer.protocol"));
        activationFailsNaming("changeStreamer.protocol", "changeStreamer_protocol", "http");
    }

    @Test
    void nonFinitePaddingAndBadSourceTargetsAreRejected() {
        activationFailsNaming("changeStreamer.flowControlConsensusPaddingSeconds",
                "changeStreamer_flowControlConsensusPaddingSeconds", Double.NaN);
        activationFailsNaming("changeStreamer.flowControlConsensusPaddingSeconds",
                "changeStreamer_flowControlConsensusPaddingSeconds", Double.POSITIVE_INFINITY);
        activationFailsNaming("changeSource.target", "changeSource_target", " ");
        activationFailsNaming("changeSource.target", "changeSource_target", "(zrm.changesource.type=pg");
        activationFailsNaming("changeSource.graceMs", "changeSource_graceMs", -1L);
    }

    @Test
    void purgeCycleDelayIsConfigurableAndPositive() {
        assertEquals(Duration.ofMillis(500),
                ChangeStreamerComponent.settings(config("changeStreamer_cleanupDelayMs", 500L)).cleanupDelay());
        activationFailsNaming("changeStreamer.cleanupDelayMs", "changeStreamer_cleanupDelayMs", 0L);
    }

    @Test
    void backupStrategyIsValidatedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new BackupSettings("litestream", "", false, true, Duration.ofSeconds(30)));
        assertTrue(e.getMessage().contains("'litestream'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new BackupSettings("auto", "", false, true, Duration.ZERO));
        assertTrue(e.getMessage().contains("minCleanupDelayMs"), e.getMessage());
    }
}
