package org.zrm.litestream.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LitestreamSettingsTest {

    @TempDir
    Path dir;

    private Path executable() throws Exception {
        Path exe = dir.resolve("litestream");
        if (!Files.exists(exe)) {
            Files.writeString(exe, "#!/bin/sh\nexit 0\n");
            Files.setPosixFilePermissions(exe, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return exe;
    }

    private Map<String, Object> valid() throws Exception {
        Map<String, Object> m = new HashMap<>();
        m.put("litestream.backupURL", "s3://bucket/zero");
        m.put("litestream.executable", executable().toString());
        m.put("replica.file", dir.resolve("zero.db").toString());
        return m;
    }

    private String error(Map<String, Object> m) {
        return assertThrows(IllegalArgumentException.class, () -> LitestreamSettings.of(Configs.of(m))).getMessage();
    }

    @Test
    void noBackupURLIsDisabledAndNotChecked() {
        LitestreamSettings s = LitestreamSettings.of(Configs.of(Map.of("litestream.executable", "/nowhere")));
        assertFalse(s.enabled());
    }

    @Test
    void unknownSchemeIsRefusedNamingIt() throws Exception {
        Map<String, Object> m = valid();
        m.put("litestream.backupURL", "ftp://host/zero");
        String e = error(m);
        assertTrue(e.contains("unknown scheme 'ftp'"), e);
        assertTrue(e.contains("s3"), e);
        m.put("litestream.backupURL", "/just/a/path");
        assertTrue(error(m).contains("no scheme"));
    }

    @Test
    void missingExecutableIsRefused() throws Exception {
        Map<String, Object> m = valid();
        m.put("litestream.executable", "");
        assertTrue(error(m).contains("Missing --litestream-executable"));
        m.put("litestream.executable", dir.resolve("no-such-litestream").toString());
        String e = error(m);
        assertTrue(e.contains("no-such-litestream does not exist"), e);
    }

    @Test
    void backupUsingV5WithoutRestoreUsingV5HasUpstreamsText() throws Exception {
        Map<String, Object> m = valid();
        m.put("litestream.backupUsingV5", true);
        assertEquals("--litestream-backup-using-v5 requires --litestream-restore-using-v5", error(m));
        m.put("litestream.restoreUsingV5", true);
        assertTrue(error(m).startsWith("--litestream-backup-using-v5 requires --litestream-executable to be flipped"));
        m.put("litestream.executableV5", executable().toString());
        assertTrue(LitestreamSettings.of(Configs.of(m)).backupUsingV5());
    }

    @Test
    void unwritableReplicaFolderIsRefused() throws Exception {
        Path ro = Files.createDirectory(dir.resolve("ro"));
        Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            // As root every folder is writable: the case cannot be produced (reported as skipped).
            org.junit.jupiter.api.Assumptions.assumeFalse(Files.isWritable(ro), "running as root");
            Map<String, Object> m = valid();
            m.put("replica.file", ro.resolve("zero.db").toString());
            String e = error(m);
            assertTrue(e.startsWith("replica.file: the folder " + ro + " is not writable"), e);
        } finally {
            Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    @Test
    void replicaFolderUnderAFileIsRefused() throws Exception {
        Path file = Files.writeString(dir.resolve("plain"), "x");
        Map<String, Object> m = valid();
        m.put("replica.file", file.resolve("sub/zero.db").toString());
        assertTrue(error(m).contains("is not writable"));
    }

    @Test
    void otherBadValuesNameTheProperty() throws Exception {
        Map<String, Object> m = valid();
        m.put("litestream.logLevel", "loud");
        assertTrue(error(m).startsWith("litestream.logLevel"));
        m = valid();
        m.put("litestream.snapshotBackupIntervalHours", 0.05);
        assertTrue(error(m).startsWith("litestream.snapshotBackupIntervalHours"));
        m = valid();
        m.put("litestream.configPath", dir.resolve("missing.yml").toString());
        assertTrue(error(m).contains("is not a readable file"));
    }

    @Test
    void environmentMapsEverySettingAsUpstream() throws Exception {
        Map<String, Object> m = valid();
        m.put("litestream.endpoint", "http://minio:9000");
        m.put("litestream.region", "eu-west-1");
        m.put("litestream.port", 4999);
        LitestreamSettings s = LitestreamSettings.of(Configs.of(m));
        Map<String, String> env = s.environment(Map.of("HOME", "/home/x", "ZERO_LITESTREAM_REGION", "stale"), null);
        assertEquals("/home/x", env.get("HOME"));
        assertEquals(dir.resolve("zero.db").toString(), env.get("ZERO_REPLICA_FILE"));
        assertEquals("s3://bucket/zero", env.get("ZERO_LITESTREAM_BACKUP_URL"));
        assertEquals("10000", env.get("ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT")); // 40 MB * 250
        assertEquals("100000", env.get("ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT")); // min * 10
        assertEquals("15", env.get("ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES"));
        assertEquals("715", env.get("ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES")); // 12 h * 60 - 5
        assertEquals("48", env.get("ZERO_LITESTREAM_MULTIPART_CONCURRENCY"));
        assertEquals("16777216", env.get("ZERO_LITESTREAM_MULTIPART_SIZE"));
        assertEquals("warn", env.get("ZERO_LITESTREAM_LOG_LEVEL"));
        assertEquals("text", env.get("ZERO_LOG_FORMAT"));
        assertEquals("4999", env.get("LITESTREAM_PORT"));
        assertEquals(dir.resolve("zero.db-litestream.yml").toString(), env.get("LITESTREAM_CONFIG"));
        assertEquals("http://minio:9000", env.get("ZERO_LITESTREAM_ENDPOINT"));
        assertEquals("eu-west-1", env.get("ZERO_LITESTREAM_REGION"));
        assertEquals("debug", s.environment(Map.of(), "debug").get("ZERO_LITESTREAM_LOG_LEVEL"));

        m.remove("litestream.region");
        m.put("litestream.checkpointThresholdMB", 8);
        m.put("litestream.maxCheckpointPageCount", 0L);
        m.put("litestream.incrementalBackupIntervalMinutes", 0.05);
        env = LitestreamSettings.of(Configs.of(m)).environment(Map.of("ZERO_LITESTREAM_REGION", "stale"), null);
        assertFalse(env.containsKey("ZERO_LITESTREAM_REGION"), "unset, as upstream, even if inherited");
        assertEquals("2000", env.get("ZERO_LITESTREAM_MIN_CHECKPOINT_PAGE_COUNT"));
        assertEquals("0", env.get("ZERO_LITESTREAM_MAX_CHECKPOINT_PAGE_COUNT"));
        assertEquals("0.05", env.get("ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES"));
    }

    @Test
    void generatedConfigIsZeroCachesTemplate() throws Exception {
        LitestreamSettings s = LitestreamSettings.of(Configs.of(valid()));
        s.writeGeneratedConfig();
        String yml = Files.readString(s.configPath());
        for (String key : new String[] {"path: ${ZERO_REPLICA_FILE}", "watermark-table: _zero.replicationState",
                "watermark-column: stateVersion", "url: ${ZERO_LITESTREAM_BACKUP_URL}",
                "retention: ${ZERO_LITESTREAM_SNAPSHOT_BACKUP_INTERVAL_MINUTES}m", "retention-check-interval: 1h",
                "sync-interval: ${ZERO_LITESTREAM_INCREMENTAL_BACKUP_INTERVAL_MINUTES}m",
                "multipart-size: ${ZERO_LITESTREAM_MULTIPART_SIZE}", "addr: localhost:${LITESTREAM_PORT}"}) {
            assertTrue(yml.contains(key), key);
        }
    }

    @Test
    void numbersPrintAsJavaScriptDoes() {
        assertEquals("715", LitestreamSettings.number(715.0));
        assertEquals("0.5", LitestreamSettings.number(0.5));
        assertEquals("1.25", LitestreamSettings.number(1.25));
    }
}
