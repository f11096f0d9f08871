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
 * {@code batchSize} rows (the remainder in one smaller one). {@code _0_version} is not written:
 * it takes the column default, the replica version. Used by one thread only.
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
        // By row count, prepared when first needed. A batch ends where its byte bound fell, so
        // its remainder is one INSERT of exactly that many rows: inserted row by row, the
        // remainders of 1 MiB batches of wide rows were a good part of all statements.
        PreparedStatement[] bySize = statements.computeIfAbsent(batch.liteTable(),
                t -> new PreparedStatement[batchSize + 1]);
        for (int i = 0; i < rows.size(); ) {
            int n = Math.min(batchSize, rows.size() - i);
            PreparedStatement ps = bySize[n];
            if (ps == null) {
                ps = prepare(batch, n);
                bySize[n] = ps;
            }
            int p = 1;
            for (int r = i; r < i + n; r++) {
                for (Object v : rows.get(r)) {
                    bind(ps, p++, v);
                }
            }
            ps.executeUpdate();
            i += n;
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
        for (PreparedStatement[] bySize : statements.values()) {
            for (PreparedStatement ps : bySize) {
                if (ps != null) {
                    ps.close();
                }
            }
        }
    }
}
