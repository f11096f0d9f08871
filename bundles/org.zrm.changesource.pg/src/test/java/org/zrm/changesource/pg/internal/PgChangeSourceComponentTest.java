package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Configuration mapping of the DS component; activation must not touch the database. */
class PgChangeSourceComponentTest {

    /** A config instance with the OCD's defaults, overridden by {@code values} (keyed by method name). */
    static PgChangeSourceConfig config(Map<String, Object> values) {
        return (PgChangeSourceConfig) Proxy.newProxyInstance(PgChangeSourceConfig.class.getClassLoader(),
                new Class<?>[] {PgChangeSourceConfig.class}, (proxy, method, args) -> {
                    if (values.containsKey(method.getName())) {
                        return values.get(method.getName());
                    }
                    if (method.getDefaultValue() != null) {
                        return method.getDefaultValue();
                    }
                    throw new IllegalStateException("no value for " + method.getName());
                });
    }

    @Test
    void defaultsFollowZeroCache() {
        PgSourceSettings s = PgChangeSourceComponent.settings(config(Map.of("upstream_db",
                "postgresql://u:secret@127.0.0.1:1/db")));
        assertEquals("zero", s.shard().appId());
        assertEquals(0, s.shard().shardNum());
        assertEquals(List.of(), s.publications());
        assertEquals("zero.db", s.replicaFile());
        assertEquals(30_000, s.lagReportIntervalMs());
        assertEquals(0, s.inboundTimeoutMs());
        assertEquals(0.75, s.keepaliveFraction());
        assertEquals(5, s.slotActiveRetries());
    }

    @Test
    void activationDoesNotConnectAndMasksTheSecret() {
        // Port 1 is closed: activation still succeeds because nothing connects yet.
        PgChangeSourceComponent c = new PgChangeSourceComponent(config(Map.of("upstream_db",
                "postgresql://u:secret@127.0.0.1:1/db", "app_publications", new String[] {"a,b", " c ", ""})));
        assertEquals(List.of(), c.status().get("backfills"), "no stream, no backfills");
        c.stop();
        assertEquals(List.of("a", "b", "c"), PgSourceSettings.splitPublications(new String[] {"a,b", " c ", ""}));
        assertTrue(new UpstreamDb("postgresql://u:secret@127.0.0.1:1/db").toString().contains("u:****@"));
    }

    @Test
    void badConfigurationFailsActivation() {
        assertThrows(IllegalArgumentException.class, () -> new PgChangeSourceComponent(config(Map.of("upstream_db", ""))));
        assertThrows(IllegalArgumentException.class, () -> new PgChangeSourceComponent(config(Map.of(
                "upstream_db", "postgresql://u@127.0.0.1:1/db", "app_id", "Bad-App"))));
    }

    @Test
    void anAddressOfAnotherKindLeavesTheSourceRegisteredButUnusable() throws Exception {
        // A runtime selecting the custom source hands its ws:// URL to every source.
        PgChangeSourceComponent c = new PgChangeSourceComponent(config(Map.of("upstream_db",
                "ws://127.0.0.1:1/changes/v0/stream?apiKey=secret")));
        String error = (String) c.status().get("error");
        assertTrue(error.startsWith("pg change source not usable: "), error);
        assertTrue(!error.contains("secret"), error);
        org.zrm.changesource.ChangeSourceAbortedException e = assertThrows(
                org.zrm.changesource.ChangeSourceAbortedException.class, () -> c.initialize(false));
        assertEquals(error, e.getMessage());
        assertThrows(org.zrm.operator.OperationException.class, c::orphanSlots);
        c.stop();
    }
}
