package org.zrm.backup.vfs.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The reader child's environment (spec §3.2 constructor side effects, §6.4). */
class ReaderEnvironmentTest {

    @Test
    void configuresEnv() {
        Map<String, String> env = new HashMap<>(Map.of("AWS_ACCESS_KEY_ID", "kept"));

        new ReaderEnvironment("s3://bucket/path", "debug", "/tmp/litestream-vfs.log", "/opt/litestream-vfs.so")
                .applyTo(env);

        assertEquals(Map.of("AWS_ACCESS_KEY_ID", "kept", "LITESTREAM_REPLICA_URL", "s3://bucket/path",
                "LITESTREAM_LOG_LEVEL", "DEBUG", "LITESTREAM_LOG_FILE", "/tmp/litestream-vfs.log",
                "ZERO_LITESTREAM_VFS_EXTENSION_PATH", "/opt/litestream-vfs.so"), env);
    }

    @Test
    void clearsUnsetOptionalVfsLogFileEnv() {
        Map<String, String> env = new HashMap<>(Map.of("LITESTREAM_LOG_FILE", "/tmp/old.log"));

        new ReaderEnvironment("s3://bucket/path", "", "", "/opt/litestream-vfs.so").applyTo(env);

        assertEquals(null, env.get("LITESTREAM_LOG_FILE"));
        assertEquals("INFO", env.get("LITESTREAM_LOG_LEVEL"), "upstream's DEFAULT_VFS_LOG_LEVEL");
    }

    @Test
    void passesZeroCachesDefaultLevelUpperCased() {
        Map<String, String> env = new HashMap<>();
        new ReaderEnvironment("s3://b/p", "warn", null, "/x.so").applyTo(env);
        assertEquals("WARN", env.get("LITESTREAM_LOG_LEVEL"));
    }
}
