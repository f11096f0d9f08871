package org.zrm.changesource.pg.internal.backfill;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.changesource.pg.internal.sync.PgConnector;
import org.zrm.changesource.pg.internal.sync.ReplicationSlot;
import org.zrm.changesource.pg.internal.sync.ReplicationSlots;

/**
 * Puts a connection into a read-only REPEATABLE READ transaction whose snapshot is the database
 * exactly at a known LSN (spec §5.6). Postgres offers no other way to get a snapshot at a known
 * LSN than exporting it from a freshly created logical slot, so a short-lived slot
 * {@code {slot}_bf_{millis}} is created on its own replication session, its snapshot imported,
 * and the slot dropped at once: it never holds WAL for longer than the import takes.
 *
 * <p>The slot is TEMPORARY (upstream's is permanent): besides the explicit drop on every path,
 * Postgres drops it when the replication session ends, so neither a crash nor a lost connection
 * can leave it behind.
 */
final class SnapshotTransaction {

    private static final Logger LOG = LoggerFactory.getLogger(SnapshotTransaction.class);

    /** The replication session's application name, as zero-cache's. */
    static final String REPLICATION_APPLICATION_NAME = "zero-backfill-replication-session";

    private SnapshotTransaction() {}

    /**
     * Opens the snapshot transaction on {@code conn}.
     *
     * @param conn a plain connection in auto-commit mode; on success it is inside the transaction
     * @param slotPrefix the replica's slot name; the snapshot slot is {@code {slotPrefix}_bf_{millis}}
     * @return the snapshot's watermark, {@code lexi(consistent_point)}
     * @throws InterruptedException if the thread was interrupted; the slot is dropped first
     */
    static String begin(PgConnector connector, Connection conn, String slotPrefix, Duration timeout, Clock clock)
            throws SQLException, InterruptedException {
        String slotName = slotPrefix + "_bf_" + clock.millis();
        try (Connection repl = connector.connectForReplication(REPLICATION_APPLICATION_NAME)) {
            ReplicationSlot slot = ReplicationSlots.createTemporarySlot(repl, slotName, timeout);
            try {
                // Checked only after creation: an interrupt that arrived while the slot was being
                // created must still see it dropped, which the finally below does.
                throwIfInterrupted();
                importSnapshot(conn, slot.snapshotName());
                throwIfInterrupted();
            } catch (SQLException | InterruptedException | RuntimeException e) {
                dropAfterFailure(repl, slotName, e);
                throw e;
            }
            // The imported snapshot lives on in conn's transaction; the slot is no longer needed.
            drop(repl, slotName);
            String watermark = slot.replicaVersion();
            LOG.info("slot={}: opened backfill snapshot at LSN {} ({})", slotName, slot.consistentPoint(), watermark);
            return watermark;
        }
    }

    private static void importSnapshot(Connection conn, String snapshot) throws SQLException {
        conn.setAutoCommit(false);
        conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        conn.setReadOnly(true);
        try (Statement st = conn.createStatement()) {
            st.execute("SET TRANSACTION SNAPSHOT " + ShardSql.quoteLiteral(snapshot));
        }
    }

    private static void drop(Connection repl, String slotName) throws SQLException {
        try (Statement st = repl.createStatement()) {
            st.execute("DROP_REPLICATION_SLOT " + ShardSql.quoteId(slotName));
        }
    }

    private static void dropAfterFailure(Connection repl, String slotName, Exception primary) {
        try {
            drop(repl, slotName);
        } catch (SQLException e) {
            // The session is closed right after this, which drops the temporary slot anyway; the
            // caller sees the original failure with this one attached.
            primary.addSuppressed(e);
            LOG.warn("slot={}: could not drop the backfill snapshot slot, it goes with its session: {}", slotName,
                    e.toString());
        }
    }

    private static void throwIfInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while opening a backfill snapshot");
        }
    }
}
