package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changesource.SubscriptionState;

/** Configuration validation, URI handling and the component's behaviour without a database. */
class SettingsAndComponentTest {

    private static StorerConfig config(String db, String app, int shard, int batch) {
        return new StorerConfig() {
            @Override public Class<? extends Annotation> annotationType() { return StorerConfig.class; }
            @Override public String change_db() { return db; }
            @Override public String app_id() { return app; }
            @Override public int shard_num() { return shard; }
            @Override public int change_logBatchSize() { return batch; }
            @Override public int change_maxConns() { return 5; }
            @Override public int change_statementTimeoutMs() { return 20_000; }
        };
    }

    @Test
    void uriIsParsedIntoJdbcUrlAndCredentials() {
        PgUri u = PgUri.parse("postgresql://zero:p%40ss:w@127.0.0.1:6432/my_db?sslmode=disable");
        assertEquals("jdbc:postgresql://127.0.0.1:6432/my_db?sslmode=disable", u.jdbcUrl());
        assertEquals("zero", u.user());
        assertEquals("p@ss:w", u.password());
        assertFalse(u.toString().contains("p@ss"));
        assertEquals("jdbc:postgresql://h:5432/postgres", PgUri.parse("postgres://h").jdbcUrl());
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
