package org.zrm.bench.storer;

import java.io.IOException;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * Zero's PG benchmark fixture (W3) as upstream tables: upstream's schema of
 * {@code packages/zero-cache/src/test/pg-bench.ts} (four tables, their secondary indexes, one
 * publication), filled with {@link W3Fixture}'s deterministic rows through {@code COPY … FROM STDIN}.
 *
 * <p>Upstream's fixture spreads one id range over the tables by {@code id % 10}, so half the rows
 * land in {@code bench_rows}. The initial-sync workload asks for the same number of rows in every
 * table instead: each table gets the first {@code rowsPerTable} ids of its own kind, so a row is
 * still exactly the row upstream makes for that id.
 */
public final class W3Upstream {

    /** The fixture's tables, in upstream's order. */
    public static final List<String> TABLES = List.of("bench_rows", "bench_lookup", "bench_wide", "bench_composite");

    /** Rows per {@code COPY} statement: a few MB of text, so the loader's buffer stays small. */
    private static final int ROWS_PER_COPY = 5_000;

    private W3Upstream() {
    }

    /**
     * Creates the fixture's tables, indexes and publication {@code publication}, loads
     * {@code rowsPerTable} rows into each table, and vacuums them, so that every reader afterwards
     * (the product, its peer, the COPY limit) finds the same settled heap, hint bits and statistics.
     *
     * @return the fixture's payload bytes (upstream's {@code benchmarkFixturePayloadBytes}: the
     *     text and label bytes of every row), the figure MB/s is reported in
     */
    public static long create(Connection c, String publication, int rowsPerTable) throws SQLException, IOException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)");
            s.execute("CREATE TABLE bench_lookup (id INTEGER PRIMARY KEY, label TEXT NOT NULL, active BOOLEAN NOT NULL)");
            s.execute("CREATE TABLE bench_wide (id INTEGER PRIMARY KEY, group_id INTEGER NOT NULL, title TEXT NOT NULL,"
                    + " body TEXT NOT NULL, extra TEXT NOT NULL)");
            s.execute("CREATE TABLE bench_composite (account_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
                    + " payload TEXT NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (account_id, seq))");
            s.execute("CREATE INDEX bench_lookup_active_idx ON bench_lookup(active)");
            s.execute("CREATE INDEX bench_wide_group_idx ON bench_wide(group_id)");
            s.execute("CREATE INDEX bench_composite_amount_idx ON bench_composite(amount)");
            s.execute("CREATE PUBLICATION " + publication + " FOR TABLE " + String.join(", ", TABLES));
        }
        CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
        long bytes = 0;
        for (String table : TABLES) {
            bytes += load(copy, table, rowsPerTable);
        }
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(true);
        try (Statement s = c.createStatement()) {
            s.execute("VACUUM (FREEZE, ANALYZE) " + String.join(", ", TABLES));
            s.execute("CHECKPOINT");
        } finally {
            c.setAutoCommit(auto);
        }
        return bytes;
    }

    /** Loads the first {@code rows} ids of {@code table}'s kind into it; returns their payload bytes. */
    private static long load(CopyManager copy, String table, int rows) throws SQLException, IOException {
        StringBuilder text = new StringBuilder(1 << 20);
        long bytes = 0;
        int inBatch = 0;
        long id = 0;
        for (int n = 0; n < rows; n++) {
            do {
                id++;
            } while (!W3Fixture.table(id).equals(table));
            appendRow(text, id);
            bytes += W3Fixture.rowPayloadBytes(id);
            if (++inBatch == ROWS_PER_COPY) {
                copy.copyIn("COPY " + table + " FROM STDIN", new StringReader(text.toString()));
                text.setLength(0);
                inBatch = 0;
            }
        }
        if (inBatch > 0) {
            copy.copyIn("COPY " + table + " FROM STDIN", new StringReader(text.toString()));
        }
        return bytes;
    }

    /**
     * Row {@code id} of {@link W3Fixture#insert}, its values in column order, as a line of COPY's
     * text format. Payloads are made of digits, lower case letters and colons, labels and titles of
     * letters, digits, dashes and spaces: nothing the text format would have to escape.
     */
    private static void appendRow(StringBuilder out, long id) {
        String sep = "";
        for (Object v : W3Fixture.insert(id).newRow().values()) {
            out.append(sep).append(v instanceof Boolean b ? (b ? "t" : "f") : v);
            sep = "\t";
        }
        out.append('\n');
    }
}
