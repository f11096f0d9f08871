package org.zrm.changesource.pg.internal.sync;

import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.zrm.replica.LiteNames;

/**
 * Inserts copied rows into the SQLite replica with multi-row {@code INSERT}s of
 * {@code batchSize} rows (the remainder row by row). {@code _0_version} is not written: it takes the
 * column default, the replica version. Used by one thread only.
 */
final class LiteInserter implements AutoCloseable {

    private final Connection lite;
    private final int batchSize;
    private final Map<String, PreparedStatement[]> statements = new HashMap<>();

    LiteInserter(Connection lite, int batchSize) {
        this.lite = lite;
        this.batchSize = batchSize;
    }

    void insert(CopyBatch batch) throws SQLException {
        List<Object[]> rows = batch.rows();
        if (rows.isEmpty()) {
            return;
        }
        PreparedStatement[] ps = statements.get(batch.liteTable());
        if (ps == null) {
            ps = new PreparedStatement[] {prepare(batch, batchSize), prepare(batch, 1)};
            statements.put(batch.liteTable(), ps);
        }
        int width = batch.columns().size();
        int i = 0;
        for (; i + batchSize <= rows.size(); i += batchSize) {
            int p = 1;
            for (int r = i; r < i + batchSize; r++) {
                for (Object v : rows.get(r)) {
                    bind(ps[0], p++, v);
                }
            }
            ps[0].executeUpdate();
        }
        for (; i < rows.size(); i++) {
            Object[] row = rows.get(i);
            for (int c = 0; c < width; c++) {
                bind(ps[1], c + 1, row[c]);
            }
            ps[1].executeUpdate();
        }
    }

    private PreparedStatement prepare(CopyBatch batch, int n) throws SQLException {
        String cols = batch.columns().stream().map(LiteNames::quote).collect(Collectors.joining(","));
        String one = "(" + batch.columns().stream().map(c -> "?").collect(Collectors.joining(",")) + ")";
        String values = String.join(",", java.util.Collections.nCopies(n, one));
        return lite.prepareStatement("INSERT INTO " + LiteNames.quote(batch.liteTable()) + " (" + cols + ") VALUES "
                + values);
    }

    static void bind(PreparedStatement ps, int i, Object v) throws SQLException {
        if (v == null) {
            ps.setNull(i, java.sql.Types.NULL);
        } else if (v instanceof Long l) {
            ps.setLong(i, l);
        } else if (v instanceof Integer n) {
            ps.setLong(i, n);
        } else if (v instanceof BigInteger b) {
            ps.setLong(i, b.longValueExact());
        } else if (v instanceof Double d) {
            ps.setDouble(i, d);
        } else if (v instanceof String s) {
            ps.setString(i, s);
        } else if (v instanceof byte[] b) {
            ps.setBytes(i, b);
        } else {
            throw new IllegalArgumentException("Unsupported replica value type " + v.getClass().getName());
        }
    }

    @Override
    public void close() throws SQLException {
        for (PreparedStatement[] ps : statements.values()) {
            ps[0].close();
            ps[1].close();
        }
    }
}
