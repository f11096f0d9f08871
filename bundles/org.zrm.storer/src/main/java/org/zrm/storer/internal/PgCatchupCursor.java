package org.zrm.storer.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.CatchupCursor;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.WatermarkTooOldException;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * Walks the rows {@code >= subscriber watermark} and {@code <= lastWatermark} in
 * {@code (watermark, pos)} order and applies upstream's start rules: rows at the subscriber's own
 * watermark are skipped; a subscriber at the replica version is found without a row; a first row
 * newer than the subscriber means its changes were purged.
 *
 * <p>QUIRK (spec §9.3.5): a subscriber at the replica version is accepted even when the log's
 * oldest row is newer, as upstream does; the initial rows written at the replica version make
 * this safe as long as the log is not purged past them while such a replica can still connect
 * (purges are gated by every subscriber's ack and by backups).
 */
final class PgCatchupCursor implements CatchupCursor {

    private static final Logger LOG = LoggerFactory.getLogger(PgCatchupCursor.class);

    private final PreparedStatement statement;
    private final ResultSet rows;
    private final String watermark;
    private final int batchRows;
    private final ProtocolCodec codec;
    private boolean found;
    private boolean exhausted;
    private boolean closed;
    /**
     * The previous row's watermark, as text and as the bytes the server sent. The rows of one
     * transaction share their watermark, so it is decoded once per transaction instead of once
     * per row (a catch-up reads a million rows in a few seconds).
     */
    private byte[] previousWatermarkBytes;
    private String previousWatermark;

    PgCatchupCursor(PreparedStatement statement, ResultSet rows, String watermark, boolean found, int batchRows,
            ProtocolCodec codec) {
        this.statement = statement;
        this.rows = rows;
        this.watermark = watermark;
        this.found = found;
        this.batchRows = batchRows;
        this.codec = codec;
    }

    @Override
    public List<ChangeLogEntry> nextBatch() throws ChangeLogException {
        if (closed) {
            throw new ChangeLogException("catch-up cursor is closed");
        }
        List<ChangeLogEntry> out = new ArrayList<>();
        try {
            // Loops past rows at the subscriber's own watermark, so an empty list means exhausted.
            while (!exhausted && out.size() < batchRows) {
                if (!rows.next()) {
                    exhausted = true;
                    break;
                }
                String w = watermarkOfRow();
                if (w.equals(watermark)) {
                    found = true;
                } else if (found) {
                    String change = rows.getString(3);
                    out.add(new ChangeLogEntry(w, rows.getLong(2), tagOf(w, change), change, null));
                } else {
                    exhausted = true;
                    throw new WatermarkTooOldException(w, watermark);
                }
            }
        } catch (SQLException e) {
            throw new ChangeLogException("reading catch-up rows after " + watermark + " failed: " + e.getMessage(), e);
        }
        return out;
    }

    private String watermarkOfRow() throws SQLException {
        byte[] raw = rows.getBytes(1); // the column's text as received, not a copy
        if (raw == null || !Arrays.equals(raw, previousWatermarkBytes)) {
            previousWatermark = rows.getString(1);
            previousWatermarkBytes = raw;
        }
        return previousWatermark;
    }

    private String tagOf(String watermark, String change) throws ChangeLogException {
        try {
            return ChangeTag.of(change, codec);
        } catch (IllegalArgumentException e) {
            throw new ChangeLogException("change-log row at " + watermark + " is not a change: " + e.getMessage(), e);
        }
    }

    @Override
    public boolean foundStart() {
        return found;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            rows.close();
            statement.close();
        } catch (SQLException e) {
            // The snapshot's transaction ends right after and takes the portal with it.
            LOG.debug("changelog: closing catch-up cursor failed: {}", e.getMessage());
        }
    }
}
