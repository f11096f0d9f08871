package org.zrm.replicator.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.zrm.replicator.internal.Msgs.begin;
import static org.zrm.replicator.internal.Msgs.commit;
import static org.zrm.replicator.internal.Msgs.insertIssue;
import static org.zrm.replicator.internal.Msgs.status;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.status.MetricsSink;

class ReplicatorComponentTest {

    @TempDir
    Path dir;

    /** A config instance as DS would build it: defaults plus the given properties (by method name). */
    static ReplicatorConfig config(Map<String, Object> values) {
        return (ReplicatorConfig) Proxy.newProxyInstance(ReplicatorConfig.class.getClassLoader(),
                new Class<?>[] {ReplicatorConfig.class}, (proxy, method, args) -> {
                    if (values.containsKey(method.getName())) {
                        return values.get(method.getName());
                    }
                    Object dflt = method.getDefaultValue();
                    if (dflt == null) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    return dflt;
                });
    }

    @Test
    void remoteModeReplicatesAndReportsStatusAndMetrics() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "01");
        try (FakeWebSocketStreamer server = new FakeWebSocketStreamer()) {
            ReplicatorConfig config = config(Map.of("replica_file", file.toString(),
                    "changeStreamer_uri", "http://user:secret@127.0.0.1:" + server.port(), "task_id", "t1"));
            ReplicatorComponent component = new ReplicatorComponent(config, new RemoteUpstream(config));
            try {
                FakeWebSocketStreamer.Conn conn = server.awaitConnection();
                assertEquals("t1", conn.context.taskID());
                conn.send(status(), begin("0a"), insertIssue("a", "one"), commit("0a"));
                conn.awaitAcks(4);
                Await.until("status", () -> component.status().get("stateVersion").equals("0a"));
                Map<String, Object> s = component.status();
                assertEquals("replicator", component.section());
                assertEquals("backup", s.get("mode"));
                assertEquals("remote", s.get("changeStreamer"));
                assertEquals("REPLICATING", s.get("phase"));
                assertEquals(true, s.get("connected"));
                assertEquals(1L, s.get("transactionsApplied"));
                assertEquals("01", s.get("replicaVersion"));
                assertEquals(-1, String.valueOf(s.get("uri")).indexOf("secret"), "credentials are masked: " + s.get("uri"));

                Map<String, Double> metrics = new LinkedHashMap<>();
                component.collect(new MetricsSink() {
                    @Override
                    public void gauge(String name, String help, Map<String, String> labels, double value) {
                        metrics.put(name, value);
                    }

                    @Override
                    public void counter(String name, String help, Map<String, String> labels, double value) {
                        metrics.put(name, value);
                    }
                });
                assertEquals(1.0, metrics.get("zrm_replicator_connected"));
                assertEquals(1.0, metrics.get("zrm_replicator_transactions_applied_total"));
                assertEquals(10.0, metrics.get("zrm_replica_state_version"), "0a is 10");
            } finally {
                component.deactivate();
            }
            assertEquals("STOPPED", component.status().get("phase"));
        }
    }

    @Test
    void aRemoteUpstreamWithoutAUriIsAClearConfigurationError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RemoteUpstream(config(Map.of("changeStreamer_uri", " "))));
        assertTrue(e.getMessage().startsWith("changeStreamer.uri is empty"), e.getMessage());
        assertTrue(e.getMessage().contains("ZERO_CHANGE_STREAMER_URI"), e.getMessage());
    }

    @Test
    void invalidUriIsAClearConfigurationError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RemoteUpstream(config(Map.of("changeStreamer_uri", "postgres://127.0.0.1:5432/db"))));
        assertEquals("changeStreamer.uri must be ws://, wss://, http:// or https://, got postgres://127.0.0.1:5432/db",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new RemoteUpstream(config(Map.of("changeStreamer_uri", "ws://host:12/a b"))));
        assertTrue(e.getMessage().startsWith("changeStreamer.uri is not a URI"), e.getMessage());
    }

    @Test
    void theUpstreamsNameTheirKindAsTheTargetsSelectIt() {
        assertEquals("(zrm.replicator.upstream=in-process)", config(Map.of()).upstream_target());
        assertEquals(ReplicatorUpstream.IN_PROCESS, new InProcessUpstream(new FakeChangeStreamer()).kind());
        assertEquals(ReplicatorUpstream.REMOTE,
                new RemoteUpstream(config(Map.of("changeStreamer_uri", "ws://127.0.0.1:4849"))).kind());
    }

    @Test
    void inProcessModeSubscribesThroughTheService() throws Exception {
        Path file = dir.resolve("zero.db");
        TestReplica.create(file, "01");
        FakeChangeStreamer streamer = new FakeChangeStreamer();
        ReplicatorComponent component = new ReplicatorComponent(config(Map.of("replica_file", file.toString(),
                "task_id", "t2")), new InProcessUpstream(streamer));
        try {
            FakeChangeStreamer.FakeSubscription sub = streamer.awaitSubscription();
            assertEquals("t2", sub.context.taskID());
            assertEquals("01", sub.context.watermark());
            sub.push(status(), begin("0a"), insertIssue("a", "one"), commit("0a"));
            sub.awaitConsumed(4);
            assertEquals("0a", component.status().get("stateVersion"));
            assertEquals("in-process", component.status().get("changeStreamer"));
        } finally {
            component.deactivate();
        }
    }
}
