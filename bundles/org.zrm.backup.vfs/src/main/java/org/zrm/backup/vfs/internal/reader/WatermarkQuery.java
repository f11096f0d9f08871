package org.zrm.backup.vfs.internal.reader;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;

/**
 * The reader's query (upstream, exactly): Zero's replication state as the backup holds it, plus
 * the VFS's transaction id and poll lag, which the extension registers as SQL functions on every
 * connection it serves.
 */
final class WatermarkQuery implements AutoCloseable {

    static final String SQL = "SELECT stateVersion AS watermark, writeTimeMs, litestream_txid() AS txid,"
            + " litestream_lag() AS lagSeconds FROM \"_zero.replicationState\"";

    private final PreparedStatement statement;
    private final Clock clock;

    /**
     * @param connection a connection whose schema has {@code _zero.replicationState} and which has
     *     the two {@code litestream_*} functions
     * @param clock stamps {@code observedAtMs}
     * @throws SQLException if the statement cannot be prepared (no such table or function)
     */
    WatermarkQuery(Connection connection, Clock clock) throws SQLException {
        this.statement = connection.prepareStatement(SQL);
        this.clock = clock;
    }

    /**
     * Runs the query and validates the row as upstream does ({@code watermark} text,
     * {@code writeTimeMs} number or null, {@code txid} text, {@code lagSeconds} number).
     *
     * @throws SQLException if the query fails, returns no row, or the row is malformed
     */
    BackupWatermark read() throws SQLException {
        try (ResultSet rs = statement.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("the backup's _zero.replicationState has no row");
            }
            Object watermark = rs.getObject("watermark");
            Object writeTimeMs = rs.getObject("writeTimeMs");
            Object txid = rs.getObject("txid");
            Object lagSeconds = rs.getObject("lagSeconds");
            if (!(watermark instanceof String) || !(writeTimeMs == null || writeTimeMs instanceof Number)
                    || !(txid instanceof String) || !(lagSeconds instanceof Number)) {
                throw new SQLException("malformed backup watermark row: watermark=" + describe(watermark)
                        + ", writeTimeMs=" + describe(writeTimeMs) + ", txid=" + describe(txid)
                        + ", lagSeconds=" + describe(lagSeconds)
                        + " (expected text, number or null, text, number)");
            }
            return new BackupWatermark((String) watermark,
                    writeTimeMs == null ? null : ((Number) writeTimeMs).longValue(), (String) txid,
                    ((Number) lagSeconds).longValue(), clock.millis());
        }
    }

    private static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        String type = value instanceof String ? "text" : value instanceof byte[] ? "blob"
                : value instanceof Number ? "number" : value.getClass().getSimpleName();
        return value instanceof byte[] ? type : type + " " + value;
    }

    @Override
    public void close() throws SQLException {
        statement.close();
    }
}
