package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changesource.SubscriptionState;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerListener;
import org.zrm.storer.internal.queue.StorerQueueSettings;

/** Configuration validation, URI handling and the component's behaviour without a database. */
class SettingsAndComponentTest {

    private static StorerConfig config(String db, String app, int shard, int batch) {
        return config(db, app, shard, batch, "copy", 0.04, 0, 50_000, 1000, 8L << 20, 0);
    }

    private static StorerConfig config(String db, String app, int shard, int batch, String insertMode,
            double heapProportion, long limitBytes, int maxQueued, int groupTxns, long groupBytes, long groupDelayMs) {
        return new StorerConfig() {
            @Override public Class<? extends Annotation> annotationType() { return StorerConfig.class; }
            @Override public String change_db() { return db; }
            @Override public String app_id() { return app; }
            @Override public int shard_num() { return shard; }
            @Override public int change_logBatchSize() { return batch; }
            @Override public int change_maxConns() { return 5; }
            @Override public int change_statementTimeoutMs() { return 20_000; }
            @Override public long change_sizeSampleIntervalMs() { return 30_000; }
            @Override public String change_insertMode() { return insertMode; }
            @Override public double changeStreamer_backPressureLimitHeapProportion() { return heapProportion; }
            @Override public long change_backPressureLimitBytes() { return limitBytes; }
            @Override public int change_maxQueuedMessages() { return maxQueued; }
            @Override public int change_groupCommit_maxTransactions() { return groupTxns; }
            @Override public long change_groupCommit_maxBytes() { return groupBytes; }
            @Override public long change_groupCommit_maxDelayMs() { return groupDelayMs; }
        };
    }

    private static final String DB = "postgresql://u:secret@127.0.0.1:1/db";

    @Test
    void insertModeIsConfigurableAndCopyByDefault() {
        assertEquals(StorerSettings.InsertMode.COPY, StorerSettings.of(DB, "zero", 0).insertMode());
        assertEquals(StorerSettings.InsertMode.COPY, StorerComponent.settings(config(DB, "zero", 0, 1)).insertMode());
        assertEquals(StorerSettings.InsertMode.JSON, StorerComponent.settings(
                config(DB, "zero", 0, 1, " JSON ", 0.04, 0, 1, 1, 1, 0)).insertMode());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new StorerComponent(
                config(DB, "zero", 0, 1, "insert", 0.04, 0, 1, 1, 1, 0)));
        assertEquals("change.insertMode must be copy or json: \"insert\"", e.getMessage());
        assertTrue(StorerSettings.of(DB, "zero", 0).toString().contains("insertMode=copy"));
    }

    @Test
    void queueSettingsComeFromTheConfiguration() {
        StorerQueueSettings q = StorerComponent.queueSettings(
                config(DB, "zero", 0, 1, "copy", 0.25, 1234, 77, 5, 999, 40));
        assertEquals(new StorerQueueSettings(0.25, 1234, 77, 5, 999, Duration.ofMillis(40)), q);
        assertEquals(StorerQueueSettings.defaults(), StorerComponent.queueSettings(config(DB, "zero", 0, 1)));
    }

    @Test
    void invalidQueueSettingsFailActivationWithTheirPropertyName() {
        List<Map.Entry<String, StorerConfig>> bad = new ArrayList<>();
        bad.add(Map.entry("changeStreamer.backPressureLimitHeapProportion must be in (0, 1]",
                config(DB, "zero", 0, 1, "copy", 0, 0, 1, 1, 1, 0)));
        bad.add(Map.entry("changeStreamer.backPressureLimitHeapProportion must be in (0, 1]",
                config(DB, "zero", 0, 1, "copy", 1.5, 0, 1, 1, 1, 0)));
        bad.add(Map.entry("change.backPressureLimitBytes must be >= 0",
                config(DB, "zero", 0, 1, "copy", 0.04, -1, 1, 1, 1, 0)));
        bad.add(Map.entry("change.maxQueuedMessages must be >= 1",
                config(DB, "zero", 0, 1, "copy", 0.04, 0, 0, 1, 1, 0)));
        bad.add(Map.entry("change.groupCommit.maxTransactions must be in 1..100000",
                config(DB, "zero", 0, 1, "copy", 0.04, 0, 1, 100_001, 1, 0)));
        bad.add(Map.entry("change.groupCommit.maxBytes must be >= 1",
                config(DB, "zero", 0, 1, "copy", 0.04, 0, 1, 1, 0, 0)));
        bad.add(Map.entry("change.groupCommit.maxDelayMs must be in 0..1000",
                config(DB, "zero", 0, 1, "copy", 0.04, 0, 1, 1, 1, 1001)));
        bad.add(Map.entry("change.groupCommit.maxDelayMs must be in 0..1000",
                config(DB, "zero", 0, 1, "copy", 0.04, 0, 1, 1, 1, -1)));
        for (Map.Entry<String, StorerConfig> c : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new StorerComponent(c.getValue()));
            assertTrue(e.getMessage().startsWith(c.getKey()), e.getMessage());
            assertFalse(e.getMessage().contains("secret"));
        }
    }

    /** The component builds its queue from the configured bounds over its own change log. */
    @Test
    void componentBuildsAQueueFromItsSettings() throws Exception {
        StorerComponent component = new StorerComponent(config(DB, "zero", 0, 1, "copy", 0.04, 4096, 3, 2, 100, 0));
        assertEquals(new StorerQueueSettings(0.04, 4096, 3, 2, 100, Duration.ZERO), component.queueSettings());
        StorerListener listener = new StorerListener() {
            @Override public void stored(String commitWatermark, org.zrm.protocol.ChangeSourceUpstream ack) { }
            @Override public void statusAcked(org.zrm.protocol.ChangeSourceUpstream echo) { }
            @Override public void failed(ChangeLogException cause) { }
        };
        try (Storer queue = component.start("task", listener, (snapshot, requests) -> { })) {
            assertNotNull(queue);
        }
        component.deactivate();
    }

    @Test
    void changeDbUriIsReadLikeZeroCache() {
        // The parsing itself is org.zrm.config.PostgresUri's (tested there): zero's spellings such
        // as sslmode=no-verify are accepted, and the password never shows.
        StorerSettings settings = StorerSettings.of("postgres://u:p%40ss@h/db?sslmode=no-verify", "zero", 0);
        assertFalse(settings.toString().contains("p@ss"), settings.toString());
        assertFalse(settings.toString().contains("p%40ss"), settings.toString());
    }

    @Test
    void malformedUriFailsWithAMaskedMessage() {
        for (String bad : List.of("", "http://u:secret@h/db", "postgresql://u:secret@/db", "postgresql://u:secret@h:x/db",
                "not a uri at all")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> StorerSettings.of(bad, "zero", 0), bad);
            assertFalse(e.getMessage().contains("secret"), e.getMessage());
        }
    }

    @Test
    void invalidSettingsFailActivationWithTheirPropertyName() {
        String db = "postgresql://u:secret@127.0.0.1:1/db";
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new StorerComponent(config(db, "zero", 0, 0)))
                .getMessage().startsWith("change.logBatchSize must be >= 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new StorerComponent(config(db, "Zero-App", 0, 1)))
                .getMessage().startsWith("app.id must match"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new StorerComponent(config(db, "zero", -1, 1)))
                .getMessage().startsWith("shard.num must be >= 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new StorerComponent(config("", "zero", 0, 1)))
                .getMessage().startsWith("change.db is not set"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorerSettings.of(db, "zero", 0).withMaxConns(1))
                .getMessage().startsWith("change.maxConns must be >= 2"));
        assertFalse(StorerSettings.of(db, "zero", 0).toString().contains("secret"));
        assertEquals("zero_0/cdc", StorerSettings.of(db, "zero", 0).schemaName());
    }

    /** Activation does not wait for the database; operations fail with a clear, masked error. */
    @Test
    void unreachableDatabaseGivesAClearErrorAndDoesNotBlockActivation() throws Exception {
        long start = System.nanoTime();
        StorerComponent component = new StorerComponent(config("postgresql://u:secret@127.0.0.1:1/db", "zero", 0, 2000));
        assertTrue(System.nanoTime() - start < 2_000_000_000L, "activation must not block on the database");
        ChangeLogException e = assertThrows(ChangeLogException.class,
                () -> component.ensureReplicationConfig(new SubscriptionState("00", List.of(), "00"), false));
        assertTrue(e.getMessage().startsWith("cannot connect to change database postgresql://u:****@127.0.0.1:1/db"),
                e.getMessage());
        assertFalse(e.getMessage().contains("secret"));
        // Still failing the same way on the next call (lazy retry), not wedged.
        assertThrows(ChangeLogException.class, component::replicationState);
        component.deactivate();
    }
}
