package org.zrm.changesource.pg.internal.sync;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.setup.ShardId;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.watermark.Lsn;

/**
 * Replication slot creation and cleanup (spec §5.1–5.3, upstream {@code replication-slots.ts}). All
 * slot creation and dropping happens under the advisory lock
 * {@code hashtext('replication-slot-management:{app}_{n}')}, shared with zero-cache.
 */
public final class ReplicationSlots {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationSlots.class);

    /** Upstream's client-side limit for CREATE_REPLICATION_SLOT. */
    public static final Duration DEFAULT_CREATE_TIMEOUT = Duration.ofSeconds(30);

    private static final String INSUFFICIENT_PRIVILEGE = "42501";
    private static final String CONFIGURATION_LIMIT_EXCEEDED = "53400";
    private static final String OBJECT_IN_USE = "55006";

    private ReplicationSlots() {}

    /** Bijective base-26 suffix of pool slot {@code n}: 0→a, 25→z, 26→aa, 702→aaa. */
    public static String slotPoolSuffix(int n) {
        StringBuilder sb = new StringBuilder();
        long k = (long) n + 1;
        while (k > 0) {
            k--;
            sb.insert(0, (char) ('a' + (k % 26)));
            k /= 26;
        }
        return sb.toString();
    }

    /**
     * Creates a logical {@code pgoutput} slot with an exported snapshot on a replication
     * connection. {@code lock_timeout} is set first, to one second below {@code timeout}, so a long
     * transaction makes the server fail with 55P03 instead of leaving an active walsender behind; the
     * client-side {@code timeout} is a backstop that aborts the connection.
     *
     * <p>After this returns, issue nothing else on {@code replConn} until every importer has run
     * {@code SET TRANSACTION SNAPSHOT}.
     *
     * @throws SlotCreationTimeoutException if the client-side timeout fired
     * @throws SQLException e.g. 55P03 lock_not_available from the server-side lock timeout
     */
    public static ReplicationSlot createReplicationSlot(Connection replConn, String slotName, boolean failover,
            Duration timeout) throws SQLException {
        return createReplicationSlot(replConn, slotName, failover, timeout, Math.max(1, timeout.toMillis() - 1000));
    }

    /** As above with an explicit server-side lock timeout (0 disables it; tests of the backstop). */
    static ReplicationSlot createReplicationSlot(Connection replConn, String slotName, boolean failover,
            Duration timeout, long lockTimeoutMs) throws SQLException {
        return createSlot(replConn, slotName, false, failover, timeout, lockTimeoutMs);
    }

    /**
     * Creates a TEMPORARY logical slot with an exported snapshot, for a snapshot at a known LSN
     * (backfill). Unlike upstream's permanent slot, Postgres itself drops a temporary slot when
     * the session ends, so a crash between creation and the explicit drop cannot leave a slot
     * behind that holds WAL; and while the session lives the slot counts as active, so no other
     * manager's cleanup of inactive slots drops it under us. Same timeouts as
     * {@link #createReplicationSlot(Connection, String, boolean, Duration)}.
     */
    public static ReplicationSlot createTemporarySlot(Connection replConn, String slotName, Duration timeout)
            throws SQLException {
        return createSlot(replConn, slotName, true, false, timeout, Math.max(1, timeout.toMillis() - 1000));
    }

    private static ReplicationSlot createSlot(Connection replConn, String slotName, boolean temporary,
            boolean failover, Duration timeout, long lockTimeoutMs) throws SQLException {
        try (Statement st = replConn.createStatement()) {
            st.execute("SET lock_timeout = " + lockTimeoutMs);
        }
        String sql = "CREATE_REPLICATION_SLOT " + ShardSql.quoteId(slotName) + (temporary ? " TEMPORARY" : "")
                + " LOGICAL pgoutput" + (failover ? " (FAILOVER)" : "");
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean timedOut = new AtomicBoolean();
        CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS).execute(() -> {
            if (done.compareAndSet(false, true)) {
                timedOut.set(true);
                try {
                    // Closing the socket is the only way to stop a walsender command from the client.
                    replConn.abort(Runnable::run);
                } catch (SQLException e) {
                    LOG.warn("slot={}: error closing timed-out replication slot session: {}", slotName, e.toString());
                }
            }
        });
        try (Statement st = replConn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                throw new SQLException("CREATE_REPLICATION_SLOT returned no row");
            }
            ReplicationSlot slot = new ReplicationSlot(rs.getString("slot_name"), Lsn.parse(rs.getString("consistent_point")),
                    rs.getString("snapshot_name"), rs.getString("output_plugin"));
            if (!done.compareAndSet(false, true)) {
                throw timeoutError(slotName, timeout, null);
            }
            LOG.info("slot={}: created replication slot at {} (snapshot {})", slot.slotName(), slot.consistentPoint(),
                    slot.snapshotName());
            return slot;
        } catch (SQLException e) {
            done.set(true);
            if (timedOut.get()) {
                throw timeoutError(slotName, timeout, e);
            }
            throw e;
        }
    }

    private static SlotCreationTimeoutException timeoutError(String slot, Duration timeout, Throwable cause) {
        return new SlotCreationTimeoutException("Timed out after " + timeout.toMillis() + " ms creating replication slot "
                + slot + ". Crashing to force a clean restart.", cause);
    }

    /** The client-side timeout of slot creation fired (the replication connection was closed). */
    public static final class SlotCreationTimeoutException extends SQLException {
        private static final long serialVersionUID = 1L;

        SlotCreationTimeoutException(String message, Throwable cause) {
            super(message, "57014", cause);
        }
    }

    /**
     * Creates a slot with the first free pool name and records it in {@code "{app}_{n}".replicas}
     * (spec §5.2), retrying once after granting REPLICATION (42501) or after releasing slots of
     * inactive replicas (53400).
     *
     * @param conn a plain connection (auto-commit)
     * @param replConn the replication connection that will own the exported snapshot
     */
    public static ReplicationSlot createReplicaAndSlot(Connection conn, Connection replConn, ShardId shard,
            String replicaId, boolean failover, Duration timeout) throws SQLException {
        for (boolean first = true;; first = false) {
            dropUnclaimedSlots(conn, shard);
            try {
                return inTransaction(conn, () -> {
                    lock(conn, shard);
                    Set<String> inUse = new HashSet<>();
                    try (PreparedStatement ps = conn.prepareStatement(
                            "SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE ?")) {
                        ps.setString(1, shard.slotPrefix() + "%");
                        try (ResultSet rs = ps.executeQuery()) {
                            while (rs.next()) {
                                inUse.add(rs.getString(1));
                            }
                        }
                    }
                    String name = null;
                    for (int k = 0; name == null; k++) {
                        String candidate = shard.slotPrefix() + slotPoolSuffix(k);
                        if (!inUse.contains(candidate)) {
                            name = candidate;
                        }
                    }
                    ReplicationSlot slot = createReplicationSlot(replConn, name, failover, timeout);
                    try (PreparedStatement ps = conn.prepareStatement("INSERT INTO "
                            + ShardSql.quoteId(shard.schema()) + ".replicas (id, slot, version) VALUES (?, ?, ?)")) {
                        ps.setString(1, replicaId);
                        ps.setString(2, slot.slotName());
                        ps.setString(3, slot.replicaVersion());
                        ps.execute();
                    }
                    return slot;
                });
            } catch (SQLException e) {
                if (first && INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                    try (Statement st = conn.createStatement()) {
                        st.execute("ALTER ROLE current_user WITH REPLICATION");
                    }
                    LOG.info("Added the REPLICATION role to database user");
                    continue;
                }
                if (first && CONFIGURATION_LIMIT_EXCEEDED.equals(e.getSQLState())) {
                    LOG.warn("Reached max replication slots. Attempting to clean up unused slots: {}", e.getMessage());
                    try (Statement st = conn.createStatement()) {
                        st.execute("DELETE FROM " + ShardSql.quoteId(shard.schema()) + ".replicas USING "
                                + "pg_replication_slots slots WHERE replicas.slot = slots.slot_name AND NOT slots.active");
                    }
                    continue;
                }
                throw e;
            }
        }
    }

    /**
     * Deletes replica rows of lower rank, then drops slots no replica claims (spec §5.3).
     */
    public static SlotCleanup dropOldReplicasAndSlots(Connection conn, ShardId shard, long beforeRank)
            throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(
                "DELETE FROM " + ShardSql.quoteId(shard.schema()) + ".replicas WHERE rank < ? RETURNING id, slot")) {
            ps.setLong(1, beforeRank);
            List<String> deleted = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    deleted.add(rs.getString(1) + "/" + rs.getString(2));
                }
            }
            if (!deleted.isEmpty()) {
                LOG.info("shard={}: deleted {} old replica(s): {}", shard.schema(), deleted.size(), deleted);
            }
        }
        return dropUnclaimedSlots(conn, shard);
    }

    /** Drops inactive pool slots without a replica row; counts the remaining ones. */
    public static SlotCleanup dropUnclaimedSlots(Connection conn, ShardId shard) throws SQLException {
        String replicas = ShardSql.quoteId(shard.schema()) + ".replicas";
        return inTransaction(conn, () -> {
            lock(conn, shard);
            List<String> dropped = new ArrayList<>();
            try (PreparedStatement ps = conn.prepareStatement("SELECT slot_name AS slot, pg_drop_replication_slot(slot_name) "
                    + "FROM pg_replication_slots LEFT JOIN " + replicas + " replica ON slot_name = slot "
                    + "WHERE slot_name LIKE ? AND NOT active AND replica.id IS NULL")) {
                ps.setString(1, shard.slotLikeExpression());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        dropped.add(rs.getString(1));
                    }
                }
            }
            if (!dropped.isEmpty()) {
                LOG.info("shard={}: dropped inactive replication slots {}", shard.schema(), dropped);
            }
            int active = 0;
            int draining = 0;
            try (PreparedStatement ps = conn.prepareStatement("SELECT slot_name, replica.id FROM pg_replication_slots "
                    + "LEFT JOIN " + replicas + " replica ON slot_name = slot WHERE slot_name LIKE ?")) {
                ps.setString(1, shard.slotLikeExpression());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        if (rs.getString(2) == null) {
                            draining++;
                        } else {
                            active++;
                        }
                    }
                }
            }
            return new SlotCleanup(dropped.size(), active, draining);
        });
    }

    /**
     * @return the shard's slots (pool and pre-pool name) that no walsender streams and no replica
     *     row claims, by name
     */
    public static List<String> orphanSlots(Connection conn, ShardId shard) throws SQLException {
        String replicas = ShardSql.quoteId(shard.schema()) + ".replicas";
        List<String> orphans = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement("SELECT slot_name FROM pg_replication_slots LEFT JOIN "
                + replicas + " replica ON slot_name = slot WHERE (slot_name LIKE ? OR slot_name = ?) AND NOT active"
                + " AND replica.id IS NULL ORDER BY slot_name")) {
            ps.setString(1, shard.slotLikeExpression());
            ps.setString(2, shard.legacySlot());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    orphans.add(rs.getString(1));
                }
            }
        }
        return orphans;
    }

    /**
     * Drops {@code slot} if it is one of {@link #orphanSlots}, under the slot-management lock so
     * that no replica claims it meanwhile.
     *
     * @return empty if dropped, else why it was refused
     */
    public static java.util.Optional<String> dropOrphanSlot(Connection conn, ShardId shard, String slot)
            throws SQLException {
        String replicas = ShardSql.quoteId(shard.schema()) + ".replicas";
        return inTransaction(conn, () -> {
            lock(conn, shard);
            try (PreparedStatement ps = conn.prepareStatement("SELECT s.active, replica.id FROM pg_replication_slots s"
                    + " LEFT JOIN " + replicas + " replica ON s.slot_name = replica.slot"
                    + " WHERE s.slot_name = ? AND (s.slot_name LIKE ? OR s.slot_name = ?)")) {
                ps.setString(1, slot);
                ps.setString(2, shard.slotLikeExpression());
                ps.setString(3, shard.legacySlot());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return java.util.Optional.of("no replication slot " + slot + " of shard " + shard.schema());
                    }
                    if (rs.getBoolean(1)) {
                        return java.util.Optional.of("slot " + slot + " is active (a walsender streams it)");
                    }
                    if (rs.getString(2) != null) {
                        return java.util.Optional.of("slot " + slot + " is claimed by replica " + rs.getString(2));
                    }
                }
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
                ps.setString(1, slot);
                ps.execute();
            }
            LOG.info("shard={}: dropped orphaned replication slot {} (operator request)", shard.schema(), slot);
            return java.util.Optional.<String>empty();
        });
    }

    /** Best-effort drop of one slot (after a failed initial sync); failures are logged. */
    public static void dropSlotQuietly(Connection conn, String slot) {
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            ps.execute();
            LOG.info("slot={}: dropped replication slot", slot);
        } catch (SQLException e) {
            LOG.warn("slot={}: could not drop replication slot: {}", slot, e.getMessage());
        }
    }

    /**
     * Drops the inactive backfill snapshot slots {@code {slot}_bf_{millis}} of the given replica
     * slot: left behind by a zero-cache (whose snapshot slots are permanent) or by a session
     * Postgres has not yet noticed is gone. A live snapshot slot is active and is left alone; a
     * slot that became active since the listing is skipped.
     *
     * @return the names of the dropped slots
     */
    public static List<String> dropOrphanedSnapshotSlots(Connection conn, String slot) throws SQLException {
        String prefix = slot + "_bf_";
        List<String> candidates = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT slot_name FROM pg_replication_slots WHERE starts_with(slot_name, ?) AND NOT active")) {
            ps.setString(1, prefix);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String name = rs.getString(1);
                    if (name.length() > prefix.length() && name.substring(prefix.length()).chars().allMatch(Character::isDigit)) {
                        candidates.add(name);
                    }
                }
            }
        }
        List<String> dropped = new ArrayList<>();
        for (String name : candidates) {
            try (PreparedStatement ps = conn.prepareStatement("SELECT pg_drop_replication_slot(slot_name) "
                    + "FROM pg_replication_slots WHERE slot_name = ? AND NOT active")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        dropped.add(name);
                    }
                }
            } catch (SQLException e) {
                // 55006: a session acquired the slot between the check and the drop, so it is not
                // an orphan; anything else is a real failure.
                if (!OBJECT_IN_USE.equals(e.getSQLState())) {
                    throw e;
                }
                LOG.info("slot={}: backfill snapshot slot {} became active, not dropped", slot, name);
            }
        }
        if (!dropped.isEmpty()) {
            LOG.info("slot={}: dropped orphaned backfill snapshot slots {}", slot, dropped);
        }
        return dropped;
    }

    private static void lock(Connection conn, ShardId shard) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
            ps.setString(1, shard.slotManagementLockName());
            ps.execute();
        }
    }

    interface SqlWork<T> {
        T run() throws SQLException;
    }

    static <T> T inTransaction(Connection conn, SqlWork<T> work) throws SQLException {
        boolean auto = conn.getAutoCommit();
        conn.setAutoCommit(false);
        try {
            T result = work.run();
            conn.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                conn.rollback();
            } catch (SQLException re) {
                e.addSuppressed(re);
            }
            throw e;
        } finally {
            conn.setAutoCommit(auto);
        }
    }
}
