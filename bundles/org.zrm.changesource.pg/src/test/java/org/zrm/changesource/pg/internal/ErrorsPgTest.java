package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.*;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.TestPostgres;

/**
 * Slot invalidation and misconfiguration, each against a dedicated cluster with the setting that
 * provokes it: reset-required instead of a crash loop, and one clear, actionable error otherwise.
 */
@Tag("pg")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorsPgTest {

    private PgCluster cluster;
    private String dbName;

    @BeforeAll
    void start() {
        cluster = TestPostgres.clusterBuilder().maxSlotWalKeepSize("1MB").start();
        dbName = cluster.createDatabase("errors");
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void invalidatedSlotRequiresReset() throws Exception {
        try (Connection c = cluster.connect(dbName)) {
            exec(c, "CREATE TABLE inv(id INT PRIMARY KEY, v TEXT)", "CREATE PUBLICATION inv_pub FOR TABLE inv");
            String start = createSlot(c, "inv_slot");
            createShardTables(c, "inv_slot", start, List.of("inv_pub"));
            // Generate WAL past max_slot_wal_keep_size while the slot is inactive, then checkpoint.
            for (int i = 0; i < 4; i++) {
                exec(c, "INSERT INTO inv SELECT g, repeat('w', 1000) FROM generate_series(" + (i * 20000 + 1) + ", "
                        + ((i + 1) * 20000) + ") g", "SELECT pg_switch_wal()");
            }
            exec(c, "CHECKPOINT");
            assertEquals("lost", queryString(c, "SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'inv_slot'"));

            PgChangeSource source = initializedSource(settings(cluster.uri(dbName)), start, List.of("inv_pub"));
            try {
                AutoResetException e = assertThrows(AutoResetException.class, () -> source.startStream(start, List.of()));
                assertTrue(e.getMessage().contains("invalidated"), e.getMessage());
                // Without the pre-check, START_REPLICATION itself fails with 55000: same outcome.
                AutoResetException direct = assertThrows(AutoResetException.class,
                        () -> source.openStream("inv_slot", List.of("inv_pub"), start));
                assertTrue(direct.getMessage().startsWith("unable to start replication stream"), direct.getMessage());
                assertFalse(direct.isRetryable(), "no crash loop: the streamer resets instead of retrying");
            } finally {
                source.stop();
            }
        }
    }

    @Test
    void missingSlotAborts() throws Exception {
        try (Connection c = cluster.connect(dbName)) {
            exec(c, "DROP SCHEMA IF EXISTS zero_0 CASCADE");
            createShardTables(c, "gone_slot", "0a", List.of("x_pub"));
            PgChangeSource source = initializedSource(settings(cluster.uri(dbName)), "0a", List.of("x_pub"));
            try {
                ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class,
                        () -> source.startStream("0a", List.of()));
                assertEquals("replication slot gone_slot is missing. A different replication-manager should now be"
                        + " running on a new replication slot.", e.getMessage());
                AutoResetException noReplica = assertThrows(AutoResetException.class, () ->
                        initializedSource(settings(cluster.uri(dbName)), "0b", List.of()).startStream("0b", List.of()));
                assertEquals("No replication slot for replica at version 0b", noReplica.getMessage());
            } finally {
                source.stop();
                exec(c, "DROP SCHEMA IF EXISTS zero_0 CASCADE");
            }
        }
    }

    @Test
    void wrongPasswordIsARetryableErrorThatSaysWhatToDoWithoutTheSecret() throws Exception {
        try (Connection c = cluster.connect(dbName)) {
            exec(c, "CREATE ROLE app LOGIN PASSWORD 'right-password'");
            Path hba = cluster.dataDir().resolve("pg_hba.conf");
            String original = Files.readString(hba);
            Files.writeString(hba, "host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
                    + original);
            exec(c, "SELECT pg_reload_conf()");
            try {
                String uri = "postgresql://app:wrong-password@127.0.0.1:" + cluster.port() + "/" + dbName;
                PgChangeSource source = source(settings(uri));
                ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> source.initialize(false));
                assertTrue(e.isRetryable());
                assertTrue(e.getMessage().contains("authentication failed: check the user and password in upstream.db"),
                        e.getMessage());
                assertFalse(e.getMessage().contains("wrong-password"), e.getMessage());
                assertTrue(source.db().toString().contains("app:****@"), source.db().toString());
                source.stop();
            } finally {
                Files.writeString(hba, original);
                exec(c, "SELECT pg_reload_conf()");
            }
        }
    }

    @Test
    void unreachableUpstreamIsRetryable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        PgChangeSource source = source(settings("postgresql://postgres@127.0.0.1:" + port + "/nope"));
        ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> source.initialize(false));
        assertTrue(e.isRetryable());
        assertTrue(e.getMessage().contains("connection failed: check that the upstream database is reachable"),
                e.getMessage());
        source.stop();
    }

    @Test
    void walLevelReplicaIsAClearError() throws Exception {
        try (PgCluster replica = TestPostgres.clusterBuilder().setting("wal_level", "replica").start()) {
            String db = replica.createDatabase("wal");
            PgChangeSource source = source(settings(replica.uri(db)));
            ChangeSourceException e = assertThrows(ChangeSourceException.class, () -> source.initialize(false));
            assertInstanceOf(ChangeSourceException.class, e);
            assertTrue(e.getMessage().contains("wal_level = replica"), e.getMessage());
            assertTrue(e.getMessage().contains("set it in postgresql.conf and restart Postgres"), e.getMessage());
            source.stop();
        }
    }

    @Test
    void walSenderTimeoutZeroDisablesLivenessWithoutAReconnectStorm() throws Exception {
        try (PgCluster noTimeout = TestPostgres.clusterBuilder().walSenderTimeout(Duration.ZERO).start()) {
            String db = noTimeout.createDatabase("wst0");
            try (Connection c = noTimeout.connect(db)) {
                exec(c, "CREATE TABLE z(id INT PRIMARY KEY)", "CREATE PUBLICATION z_pub FOR TABLE z");
                String start = createSlot(c, "z_slot");
                PgChangeSource source = source(settings(noTimeout.uri(db)));
                try {
                    var stream = source.openStream("z_slot", List.of("z_pub"), start);
                    String pid = queryString(c, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'z_slot'");
                    // canary.0 fired its watchdog immediately here; now nothing happens at all.
                    assertEquals(null, stream.poll(Duration.ofSeconds(3)));
                    assertEquals(pid, queryString(c,
                            "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'z_slot'"));
                    exec(c, "INSERT INTO z VALUES (1)");
                    assertEquals(3, takeTransactions(stream, 1, Duration.ofSeconds(10)).size());
                } finally {
                    source.stop();
                }
            }
        }
    }
}
