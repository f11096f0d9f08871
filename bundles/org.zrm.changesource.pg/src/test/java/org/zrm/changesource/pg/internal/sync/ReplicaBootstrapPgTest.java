package org.zrm.changesource.pg.internal.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * {@code initializePostgresChangeSource} up to the stream: initial sync on an empty replica, reuse
 * on restart, and the AutoReset cases of {@code checkAndUpdateUpstream} (upstream
 * {@code change-source.pg.test.ts}: "AutoReset on changed publications", "AutoReset on missing
 * publications", "missing replication slot").
 */
@PostgresTest
class ReplicaBootstrapPgTest {

    @TempDir
    Path dir;

    private ReplicaBootstrap initializer(PgDatabase db, ShardConfig shard, Path file) {
        return new ReplicaBootstrap(shard, JdbcPgConnector.fromUri(db.uri()), file, InitialSyncOptions.defaults(),
                Map.of("taskID", "t1"));
    }

    private static void exec(PgDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    @Test
    void initialSyncThenRestartReusesReplica(PgDatabase db) throws Exception {
        exec(db, "CREATE TABLE IF NOT EXISTS foo (id int PRIMARY KEY)");
        Path file = dir.resolve("replica.db");
        ShardConfig shard = ShardConfig.of("restart", 0, List.of());
        ReplicaBootstrap.Result first = initializer(db, shard, file).initialize(false);
        assertTrue(first.initialSync().isPresent());
        assertEquals(first.subscriptionState().replicaVersion(), first.subscriptionState().watermark());
        assertEquals(List.of("_restart_metadata_0", "_restart_public_0"), first.subscriptionState().publications());
        assertEquals("restart_0_a", first.upstreamReplica().slot());
        assertTrue(first.upstreamReplica().ddlDetection());
        assertEquals(Map.of("taskID", "t1"), first.upstreamReplica().initialSyncContext());

        ReplicaBootstrap.Result second = initializer(db, shard, file).initialize(false);
        assertFalse(second.initialSync().isPresent());
        assertEquals(first.subscriptionState(), second.subscriptionState());
        assertEquals(first.upstreamReplica().id(), second.upstreamReplica().id());

        ReplicaBootstrap.Result reset = initializer(db, shard, file).initialize(true);
        assertTrue(reset.initialSync().isPresent());
        assertEquals("restart_0_b", reset.upstreamReplica().slot());
    }

    @Test
    void autoResetOnChangedPublications(PgDatabase db) throws Exception {
        exec(db, "CREATE TABLE IF NOT EXISTS bar (id int PRIMARY KEY); CREATE PUBLICATION changed_a FOR TABLE bar;"
                + "CREATE PUBLICATION changed_b FOR TABLE bar");
        Path file = dir.resolve("changed.db");
        initializer(db, ShardConfig.of("changed", 0, List.of("changed_a")), file).initialize(false);
        AutoResetException e = assertThrows(AutoResetException.class,
                () -> initializer(db, ShardConfig.of("changed", 0, List.of("changed_b")), file).initialize(false));
        assertEquals("Requested publications [changed_b] do not match configured publications: [changed_a]",
                e.getMessage());
        // the shard was dropped so that the reset re-creates it with the new publications
        ReplicaBootstrap.Result again = initializer(db, ShardConfig.of("changed", 0, List.of("changed_b")), file)
                .initialize(true);
        assertEquals(List.of("_changed_metadata_0", "changed_b"), again.subscriptionState().publications());
    }

    @Test
    void autoResetOnMissingPublications(PgDatabase db) throws Exception {
        exec(db, "CREATE TABLE IF NOT EXISTS baz (id int PRIMARY KEY); CREATE PUBLICATION gone_pub FOR TABLE baz");
        Path file = dir.resolve("gone.db");
        initializer(db, ShardConfig.of("gone", 0, List.of("gone_pub")), file).initialize(false);
        exec(db, "DROP PUBLICATION gone_pub");
        AutoResetException e = assertThrows(AutoResetException.class,
                () -> initializer(db, ShardConfig.of("gone", 0, List.of("gone_pub")), file).initialize(false));
        assertEquals("Upstream publications [_gone_metadata_0] do not contain all subscribed publications "
                + "[_gone_metadata_0,gone_pub]", e.getMessage());
    }

    @Test
    void missingReplicationSlot(PgDatabase db) throws Exception {
        Path file = dir.resolve("noslot.db");
        ReplicaBootstrap.Result r = initializer(db, ShardConfig.of("noslot", 0, List.of()), file).initialize(false);
        exec(db, "SELECT pg_drop_replication_slot('" + r.upstreamReplica().slot() + "')");
        AutoResetException e = assertThrows(AutoResetException.class,
                () -> initializer(db, ShardConfig.of("noslot", 0, List.of()), file).initialize(false));
        assertEquals("replication slot noslot_0_a is missing", e.getMessage());
    }

    @Test
    void replicaUnknownUpstream(PgDatabase db) throws Exception {
        Path file = dir.resolve("unknown.db");
        ReplicaBootstrap.Result r = initializer(db, ShardConfig.of("unk", 0, List.of()), file).initialize(false);
        exec(db, "DELETE FROM unk_0.replicas");
        AutoResetException e = assertThrows(AutoResetException.class,
                () -> initializer(db, ShardConfig.of("unk", 0, List.of()), file).initialize(false));
        assertEquals("No replication slot for replica at version " + r.subscriptionState().replicaVersion(),
                e.getMessage());
    }

    @Test
    void corruptOrForeignReplicaFile(PgDatabase db) throws Exception {
        Path file = dir.resolve("corrupt.db");
        Files.writeString(file, "this is not a sqlite database at all, and long enough to have a header.........");
        assertThrows(AutoResetException.class,
                () -> initializer(db, ShardConfig.of("corrupt", 0, List.of()), file).initialize(false));
        // with reset the file is replaced by a fresh sync
        assertTrue(initializer(db, ShardConfig.of("corrupt", 0, List.of()), file).initialize(true).initialSync()
                .isPresent());
    }

    @Test
    void invalidTableAbortsWithoutRetry(PgDatabase db) throws Exception {
        exec(db, "CREATE SCHEMA IF NOT EXISTS abort_s; CREATE TABLE abort_s.nokey (a int); "
                + "CREATE PUBLICATION abort_pub FOR TABLE abort_s.nokey");
        Path file = dir.resolve("abort.db");
        ChangeSourceAbortedException e = assertThrows(ChangeSourceAbortedException.class,
                () -> initializer(db, ShardConfig.of("abortapp", 0, List.of("abort_pub")), file).initialize(false));
        assertTrue(e.getMessage().contains("nokey"), e.getMessage());
        assertFalse(Files.exists(file));
    }
}
