package org.zrm.bench.source;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;

/** Finds the walsender serving a slot (to sample its CPU) and waits for a slot's confirmed position. */
public final class WalSenders {

    private final Connection control;

    public WalSenders(Connection control) {
        this.control = control;
    }

    /**
     * Waits until {@code slot} has an active walsender and starts sampling its CPU; {@code null} if
     * the client went away first. There is no notification for a slot becoming active, so this
     * polls every millisecond (a bounded wait on an external system).
     */
    public ProcCpu await(String slot, BooleanSupplier clientAlive, ScheduledExecutorService scheduler)
            throws SQLException, InterruptedException {
        try (PreparedStatement ps = control.prepareStatement(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = ? AND active")) {
            ps.setString(1, slot);
            for (int i = 0; i < 30_000 && clientAlive.getAsBoolean(); i++) {
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return new ProcCpu(rs.getInt(1), scheduler);
                    }
                }
                Thread.sleep(1);
            }
        }
        return null;
    }

    /**
     * Waits until {@code confirmed_flush_lsn} of {@code slot} reaches {@code endLsn}: the end of the
     * measured interval. Postgres offers no notification for it, hence a 1 ms poll, bounded by
     * {@code timeoutMs}.
     */
    public boolean awaitConfirmed(String slot, String endLsn, long timeoutMs) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        try (PreparedStatement ps = control.prepareStatement("SELECT confirmed_flush_lsn >= ?::pg_lsn"
                + " FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, endLsn);
            ps.setString(2, slot);
            while (System.nanoTime() < deadline) {
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && rs.getBoolean(1)) {
                        return true;
                    }
                }
                Thread.sleep(1);
            }
        }
        return false;
    }
}
