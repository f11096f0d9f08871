package org.zrm.changesource.custom.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.ChangeSourceAbortedException;

class CustomChangeSourceComponentTest {

    /** The config with its defaults, and {@code values} (by method name) instead where given. */
    static CustomChangeSourceConfig config(Map<String, Object> values) {
        return (CustomChangeSourceConfig) Proxy.newProxyInstance(CustomChangeSourceConfig.class.getClassLoader(),
                new Class<?>[] {CustomChangeSourceConfig.class},
                (proxy, method, args) -> values.containsKey(method.getName()) ? values.get(method.getName())
                        : method.getDefaultValue());
    }

    @Test
    void aPostgresUrlDoesNotFailActivationButInitializeNamesTheProblem() {
        // The shipped cfg hands ZERO_UPSTREAM_DB to every source; with the pg source selected it is a Postgres URL.
        CustomChangeSourceComponent c = new CustomChangeSourceComponent(
                config(Map.of("upstream_db", "postgresql://u:pw@h/db")));
        ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class, () -> c.initialize(false));
        assertEquals("custom change source not usable: upstream.db must be a ws://, wss://, http:// or https:// URL for"
                + " ZERO_UPSTREAM_TYPE=custom, got scheme 'postgresql'", e.getMessage());
        assertThrows(ChangeSourceAbortedException.class, () -> c.startStream("0a", List.of()));
        assertEquals(Map.of("error", e.getMessage()), c.status());
        assertTrue(c.healthy());
        assertTrue(c.startLagReporter().isEmpty());
        c.stop();
    }

    @Test
    void noConfigurationAtAllIsTheSame() {
        CustomChangeSourceComponent c = new CustomChangeSourceComponent(config(Map.of()));
        assertTrue(assertThrows(ChangeSourceAbortedException.class, () -> c.initialize(false)).getMessage()
                .contains("but it is empty"));
    }

    @Test
    void aWsUrlConfiguresTheSource() {
        CustomChangeSourceComponent c = new CustomChangeSourceComponent(config(Map.of("upstream_db",
                "wss://h/changes/v0/stream?apiKey=s", "app_publications", new String[] {"a, b", "c"})));
        assertEquals("wss://h/changes/v0/stream", c.status().get("upstream"));
        assertEquals(List.of("a", "b", "c"), c.status().get("publications"));
        c.stop();
    }
}
