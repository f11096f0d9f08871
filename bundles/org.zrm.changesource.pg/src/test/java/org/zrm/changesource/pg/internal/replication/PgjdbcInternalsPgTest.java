package org.zrm.changesource.pg.internal.replication;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.InputStream;
import java.sql.Connection;
import org.junit.jupiter.api.Test;
import org.postgresql.core.PGStream;
import org.postgresql.util.DriverInfo;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * The replication pump reaches two pgjdbc internals by reflection: the connection's
 * {@code PGStream}, to switch off pgjdbc's one-second "is data available" cache, and its buffered
 * input, to coalesce reads. If a pgjdbc upgrade renames either field, the stream still works but
 * silently gets up to 1 s of idle latency and loses read coalescing (the benchmarks' numbers, not
 * any functional test, would show it). This test makes such an upgrade fail loudly instead.
 */
@PostgresTest
class PgjdbcInternalsPgTest {

    @Test
    void pgjdbcInternalsAreReachable(PgDatabase db) throws Exception {
        String version = "pgjdbc " + DriverInfo.DRIVER_VERSION;
        try (Connection c = db.connectForReplication()) {
            PGStream stream = ReplicationStream.enableNonBlockingPolling(c);
            assertNotNull(stream, version + ": QueryExecutorBase.pgStream is no longer reachable by reflection;"
                    + " adapt ReplicationStream.enableNonBlockingPolling to this pgjdbc version");
            InputStream input = ReplicationStream.bufferedInput(stream);
            assertNotNull(input, version + ": PGStream.pgInput is no longer reachable by reflection;"
                    + " adapt ReplicationStream.bufferedInput to this pgjdbc version");
        }
    }
}
