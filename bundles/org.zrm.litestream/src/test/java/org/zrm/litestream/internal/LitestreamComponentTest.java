package org.zrm.litestream.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad configuration: one clear error in the section, an unhealthy runtime, nothing run, fixed live. */
class LitestreamComponentTest {

    @TempDir
    Path dir;

    private static void await(BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out");
            }
            Thread.sleep(20); // observing the supervisor thread's state
        }
    }

    private Map<String, Object> config(String url, String executable) {
        Map<String, Object> m = new HashMap<>();
        m.put("litestream.backupURL", url);
        m.put("litestream.executable", executable);
        m.put("replica.file", dir.resolve("zero.db").toString());
        return m;
    }

    @Test
    void anInvalidConfigurationIsReportedAndFixedLive() throws Exception {
        LitestreamComponent c = new LitestreamComponent(Configs.of(config("gopher://host/x", "")));
        try {
            await(() -> "INVALID_CONFIG".equals(c.status().get("state")));
            assertFalse(c.healthy());
            String error = (String) c.status().get("error");
            assertTrue(error.startsWith("invalid configuration of org.zrm.litestream: litestream.backupURL"
                    + " gopher://host/x has an unknown scheme 'gopher'"), error);
            assertEquals(null, c.status().get("pid"));
            assertFalse(c.restoreIfMissing("01", "01"), "no restore with an invalid configuration");

            c.modified(Configs.of(config("file://" + dir.resolve("dest"), dir.resolve("nowhere/litestream").toString())));
            await(() -> ((String) c.status().get("error")).contains("nowhere/litestream does not exist"));
            assertFalse(c.healthy());

            c.modified(Configs.of(config("", "")));
            await(() -> "DISABLED".equals(c.status().get("state")));
            assertTrue(c.healthy());
            assertEquals(Boolean.TRUE, c.status().get("ready"), "no backup configured: ready");
        } finally {
            c.deactivate();
        }
    }
}
