package org.zrm.changesource.pg.internal.sync;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.changesource.pg.internal.types.BinaryValueDecoder;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.changesource.pg.internal.types.PgValueParser;
import org.zrm.changesource.pg.internal.types.PgValueParsers;

/**
 * Copies one published table out of the snapshot with COPY (binary by default, or text) and hands
 * converted rows to a consumer in bounded batches.
 */
final class TableCopier {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TableCopier.class);

    /** Receives full batches; may block (back-pressure), which stalls the COPY read. */
    interface BatchConsumer {
        void accept(CopyBatch batch) throws InterruptedException;
    }

    private final PublishedTable table;
    private final List<PublishedColumn> columns;
    private final BinaryValueDecoder[] decoders;
    private final boolean text;
    private final String selectList;

    TableCopier(PublishedTable table, PgTypeCatalog catalog, boolean textCopy) {
        this.table = table;
        this.columns = List.copyOf(table.columns().values());
        this.text = textCopy;
        this.decoders = new BinaryValueDecoder[columns.size()];
        List<String> select = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            PublishedColumn c = columns.get(i);
            if (textCopy) {
                PgValueParser parser = catalog.parser(c.typeOid(), PgValueParsers.Target.REPLICA);
                decoders[i] = CopySelect.replicaTextDecoder(parser, c.dataType());
                select.add(ShardSql.quoteId(c.name()));
            } else {
                CopySelect.BinaryColumn column = CopySelect.binaryColumn(c, catalog);
                decoders[i] = column.decoder();
                select.add(column.selectExpression());
            }
        }
        this.selectList = String.join(",", select);
    }

    List<String> columnNames() {
        return columns.stream().map(PublishedColumn::name).toList();
    }

    /** The SELECT, with the row filter of {@link CopySelect#where}. */
    String selectStatement() {
        return "SELECT " + selectList + " FROM " + ShardSql.quoteId(table.schema()) + "."
                + ShardSql.quoteId(table.name()) + CopySelect.where(table);
    }

    String copyStatement() {
        return "COPY (" + selectStatement() + ") TO STDOUT" + (text ? "" : " WITH (FORMAT binary)");
    }

    /** Row and size estimates from the catalog, in the snapshot. */
    long[] estimate(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT GREATEST(reltuples,0)::float8 AS \"totalRows\", pg_table_size(oid)::float8 AS \"totalBytes\" "
                        + "FROM pg_class WHERE oid = '" + (ShardSql.quoteId(table.schema()) + "."
                                + ShardSql.quoteId(table.name())).replace("'", "''") + "'::regclass")) {
            return rs.next() ? new long[] {(long) rs.getDouble(1), (long) rs.getDouble(2)} : new long[] {0, 0};
        }
    }

    /**
     * Runs the COPY on {@code conn} (inside the snapshot transaction) and emits batches.
     *
     * @return the number of rows copied
     */
    long copy(Connection conn, InitialSyncOptions opts, BatchConsumer out) throws SQLException, InterruptedException {
        String liteTable = table.liteTableName();
        List<String> names = columnNames();
        CopyOut copy = conn.unwrap(PGConnection.class).getCopyAPI().copyOut(copyStatement());
        long[] total = {0};
        try {
            int width = columns.size();
            Object[][] row = {new Object[width]};
            int[] col = {0};
            List<Object[]>[] rows = new List[] {new ArrayList<>()};
            long[] batchBytes = {0};
            RuntimeException[] decodeError = {null};
            CopyFieldSink sink = (b, o, l) -> {
                if (decodeError[0] != null) {
                    return;
                }
                try {
                    row[0][col[0]] = b == null ? null : decoders[col[0]].decode(b, o, l);
                } catch (RuntimeException e) {
                    decodeError[0] = new IllegalStateException("Error converting " + liteTable + "."
                            + names.get(col[0]) + " (" + columns.get(col[0]).dataType() + "): " + e.getMessage(), e);
                    return;
                }
                if (++col[0] == width) {
                    rows[0].add(row[0]);
                    row[0] = new Object[width];
                    col[0] = 0;
                }
            };
            BinaryCopyParser binary = text ? null : new BinaryCopyParser();
            TsvCopyParser tsv = text ? new TsvCopyParser() : null;
            byte[] chunk;
            while ((chunk = copy.readFromCopy()) != null) {
                batchBytes[0] += chunk.length;
                if (text) {
                    tsv.parse(chunk, sink);
                } else {
                    binary.parse(chunk, sink);
                }
                if (decodeError[0] != null) {
                    throw decodeError[0];
                }
                // Bound: a batch is handed over once it reaches bufferRows or bufferBytes; the
                // consumer blocks when its queue is full, which stops this read.
                if (rows[0].size() >= opts.bufferRows() || batchBytes[0] >= opts.bufferBytes()) {
                    total[0] += rows[0].size();
                    out.accept(new CopyBatch(liteTable, names, rows[0], batchBytes[0], false));
                    rows[0] = new ArrayList<>();
                    batchBytes[0] = 0;
                }
            }
            if (binary != null && !binary.complete()) {
                throw new IllegalStateException("Truncated binary COPY stream for " + liteTable);
            }
            total[0] += rows[0].size();
            out.accept(new CopyBatch(liteTable, names, rows[0], batchBytes[0], true));
            return total[0];
        } finally {
            if (copy.isActive()) {
                try {
                    copy.cancelCopy();
                } catch (SQLException e) {
                    // The connection is discarded after a failure anyway; the original error is what
                    // the caller sees, this one is only worth a debug line.
                    LOG.debug("table={}: cancelling COPY failed: {}", liteTable, e.toString());
                }
            }
        }
    }
}
