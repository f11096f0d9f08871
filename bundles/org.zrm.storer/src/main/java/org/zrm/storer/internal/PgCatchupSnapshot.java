package org.zrm.storer.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.CatchupSnapshot;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.WrongReplicaVersionException;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * A pinned {@code REPEATABLE READ READ ONLY} transaction on one pooled connection. Cursors read the
 * log through a pgjdbc portal ({@code fetchSize} = {@value #FETCH_ROWS}), so only one fetch of rows
 * is in memory whatever the log's size.
 */
final class PgCatchupSnapshot implements CatchupSnapshot {

    static final int FETCH_ROWS = 2000;
    private static final Logger LOG = LoggerFactory.getLogger(PgCatchupSnapshot.class);

    private final CdcSchema schema;
    private final ConnectionPool.Lease lease;
    private final String lastWatermark;
    private final String replicaVersion;
    private final ProtocolCodec codec;
    private PgCatchupCursor open;
    private boolean closed;

    PgCatchupSnapshot(CdcSchema schema, ConnectionPool.Lease lease, String lastWatermark, String replicaVersion,
            ProtocolCodec codec) {
        this.schema = schema;
        this.lease = lease;
        this.lastWatermark = lastWatermark;
        this.replicaVersion = replicaVersion;
        this.codec = codec;
    }

    @Override
    public String lastWatermark() {
        return lastWatermark;
    }

    /** @return the replica version of the log, read in the snapshot */
    String replicaVersion() {
        return replicaVersion;
    }

    @Override
    public CatchupCursor catchup(String subscriberReplicaVersion, String watermark) throws ChangeLogException {
        if (closed) {
            throw new ChangeLogException("catch-up snapshot is closed");
        }
        if (open != null && !open.isClosed()) {
            throw new ChangeLogException("a catch-up cursor is already open on this snapshot");
        }
        if (!replicaVersion.equals(subscriberReplicaVersion)) {
            throw new WrongReplicaVersionException(replicaVersion, subscriberReplicaVersion);
        }
        Connection c = lease.connection();
        try {
            PreparedStatement ps = c.prepareStatement(catchupSql(schema));
            ps.setFetchSize(FETCH_ROWS);
            ps.setString(1, watermark);
            ps.setString(2, lastWatermark);
            open = new PgCatchupCursor(ps, ps.executeQuery(), watermark, watermark.equals(replicaVersion), FETCH_ROWS,
                    codec);
            return open;
        } catch (SQLException e) {
            throw new ChangeLogException("catch-up query from " + watermark + " on " + schema + " failed: "
                    + e.getMessage(), e);
        }
    }

    /**
     * The catch-up read: rows from the subscriber's watermark to the snapshot's last, in key order.
     * The tag is read from the text in the JVM ({@link ChangeTag}), not with {@code ->>}.
     */
    static String catchupSql(CdcSchema schema) {
        return "SELECT watermark, pos, change::text FROM " + schema.table("changeLog")
                + " WHERE watermark >= ? AND watermark <= ? ORDER BY watermark, pos";
    }

    /** @return the connection in the snapshot's transaction (for tests of its settings) */
    Connection connection() {
        return lease.connection();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (open != null) {
            open.close();
        }
        try {
            lease.connection().rollback();
            lease.connection().setAutoCommit(true);
        } catch (SQLException e) {
            LOG.debug("changelog: ending catch-up snapshot failed, discarding connection: {}", e.getMessage());
            lease.discard();
        }
        lease.close();
    }
}
