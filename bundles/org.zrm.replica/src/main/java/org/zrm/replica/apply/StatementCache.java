package org.zrm.replica.apply;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Prepared row statements by SQL text, so that a stream of row changes to the same tables does
 * not re-prepare each statement. Bounded to {@value #MAX_STATEMENTS} statements; the least
 * recently used one is closed when the bound is hit. Cleared on every schema change, because a
 * statement prepared against a dropped or altered table must not be reused.
 */
final class StatementCache implements AutoCloseable {

    static final int MAX_STATEMENTS = 128;

    private final Connection db;
    private final LinkedHashMap<String, PreparedStatement> statements = new LinkedHashMap<>(16, 0.75f, true);

    StatementCache(Connection db) {
        this.db = db;
    }

    PreparedStatement get(String sql) throws SQLException {
        PreparedStatement ps = statements.get(sql);
        if (ps == null) {
            if (statements.size() >= MAX_STATEMENTS) {
                Iterator<Map.Entry<String, PreparedStatement>> eldest = statements.entrySet().iterator();
                PreparedStatement evicted = eldest.next().getValue();
                eldest.remove();
                evicted.close();
            }
            ps = db.prepareStatement(sql);
            statements.put(sql, ps);
        }
        return ps;
    }

    /** Closes all statements; the first failure is thrown after all were attempted. */
    void clear() throws SQLException {
        SQLException first = null;
        for (PreparedStatement ps : statements.values()) {
            try {
                ps.close();
            } catch (SQLException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        statements.clear();
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void close() throws SQLException {
        clear();
    }
}
