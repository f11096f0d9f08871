package org.zrm.replica.apply;

import java.math.BigInteger;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;

/** Binds converted replica values ({@link org.zrm.replica.LiteValues}) to statement parameters. */
final class SqlBinding {

    private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    private SqlBinding() {}

    static void bind(PreparedStatement ps, int index, Object value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.NULL);
        } else if (value instanceof String s) {
            ps.setString(index, s);
        } else if (value instanceof Long l) {
            ps.setLong(index, l);
        } else if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            ps.setLong(index, ((Number) value).longValue());
        } else if (value instanceof BigInteger b) {
            if (b.compareTo(LONG_MIN) >= 0 && b.compareTo(LONG_MAX) <= 0) {
                ps.setLong(index, b.longValue());
            } else {
                // Beyond SQLite's 64-bit integers (only numeric columns can carry these): bound as
                // decimal text, which the column's NUMERIC affinity stores as a REAL.
                ps.setString(index, b.toString());
            }
        } else if (value instanceof Number n) {
            ps.setDouble(index, n.doubleValue());
        } else if (value instanceof byte[] bytes) {
            ps.setBytes(index, bytes);
        } else {
            throw new SQLException("cannot store a " + value.getClass().getName() + " in the replica");
        }
    }
}
