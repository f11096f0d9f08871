package org.zrm.changesource.pg.internal.backfill;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.changesource.pg.internal.sync.BinaryCopyParser;
import org.zrm.changesource.pg.internal.sync.CopyFieldSink;
import org.zrm.changesource.pg.internal.sync.CopySelect;
import org.zrm.changesource.pg.internal.sync.TsvCopyParser;
import org.zrm.changesource.pg.internal.types.BinaryValueDecoder;
import org.zrm.changesource.pg.internal.types.PgTextValues;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.changesource.pg.internal.types.PgValueParser;
import org.zrm.changesource.pg.internal.types.PgValueParsers;

/**
 * Reads the COPY of one backfill on demand and turns it into rows of JSON values: the row-key
 * columns, then the backfilled columns.
 *
 * <p>Values are upstream's. Binary COPY (the default) gives the values initial sync stores (bool
 * 1/0, arrays and json as JSON text, int8 as an integer), except that bytea becomes
 * {@code {"type":"Buffer","data":[…]}}, the JSON form a Node Buffer takes in upstream's message.
 * Text COPY gives the replication stream's values (bool true/false, arrays as arrays, json as
 * text). Both are valid in the backfill's {@code json:"s"} transaction.
 *
 * <p>Memory: {@link #read} consumes COPY data only until the threshold is reached, then returns;
 * pgjdbc reads one CopyData message (one row) per call from the socket, so what is buffered is at
 * most threshold + one row of COPY bytes (plus their decoded values), whatever the table size.
 * Reading stops between calls, and TCP flow control stops the server's COPY with it.
 */
final class BackfillCopyReader {

    /**
     * The rows of one message.
     *
     * @param copyBytes the COPY bytes they were read from
     * @param estimatedSize their estimated in-memory size (see {@link #ROW_OVERHEAD})
     * @param last whether the COPY has ended ({@code rows} may then be empty)
     */
    record Batch(List<List<Object>> rows, long copyBytes, long estimatedSize, boolean last) {}

    /**
     * Estimated heap bytes of one row's list beyond its values (the list, its wrapper and the
     * array header); each column adds a reference and each non-null value
     * {@link #VALUE_OVERHEAD} plus its length in the COPY. The estimate is made as the fields are
     * decoded, so sizing a message for the change stream's byte bound needs no second walk over
     * its values (that walk was about a fifth of the backfill thread's time).
     */
    static final int ROW_OVERHEAD = 48;
    /** Estimated heap bytes of a boxed value or a string beyond its payload. */
    static final int VALUE_OVERHEAD = 24;

    private final PublishedTable table;
    private final List<String> columns;
    private final BinaryValueDecoder[] decoders;
    private final List<String> selectExpressions;
    private final boolean text;

    private CopyOut copy;
    private BinaryCopyParser binary;
    private TsvCopyParser tsv;
    private Object[] row;
    private int col;
    private List<List<Object>> rows = new ArrayList<>();
    private long bufferedBytes;
    private long estimatedSize;
    private final int rowOverhead;
    private RuntimeException decodeError;
    private final CopyFieldSink sink = this::field;

    BackfillCopyReader(PublishedTable table, List<String> columns, PgTypeCatalog catalog, boolean textCopy) {
        this.table = table;
        this.columns = List.copyOf(columns);
        this.text = textCopy;
        this.decoders = new BinaryValueDecoder[columns.size()];
        List<String> select = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            PublishedColumn c = table.columns().get(columns.get(i));
            if (textCopy) {
                PgValueParser parser = catalog.parser(c.typeOid(), PgValueParsers.Target.PROTOCOL);
                decoders[i] = (b, o, l) -> parser.parse(new String(b, o, l, StandardCharsets.UTF_8));
                select.add(ShardSql.quoteId(c.name()));
            } else {
                CopySelect.BinaryColumn bc = CopySelect.binaryColumn(c, catalog);
                BinaryValueDecoder replicaValue = bc.decoder();
                decoders[i] = (b, o, l) -> {
                    Object v = replicaValue.decode(b, o, l);
                    return v instanceof byte[] bytes ? PgTextValues.bufferJson(bytes) : v;
                };
                select.add(bc.selectExpression());
            }
        }
        this.selectExpressions = List.copyOf(select);
        this.row = new Object[columns.size()];
        this.rowOverhead = ROW_OVERHEAD + 8 * columns.size();
    }

    private String from() {
        return " FROM " + ShardSql.quoteId(table.schema()) + "." + ShardSql.quoteId(table.name()) + CopySelect.where(table);
    }

    /** The COPY, with the publications' row filters. A backfill never samples or limits. */
    String copyStatement() {
        return "COPY (SELECT " + String.join(",", selectExpressions) + from() + ") TO STDOUT"
                + (text ? "" : " WITH (FORMAT binary)");
    }

    /** Row count and summed column sizes of what the COPY reads, in one scan. */
    String totalsStatement() {
        String bytes = columns.isEmpty() ? "0"
                : columns.stream().map(c -> "COALESCE(pg_column_size(" + ShardSql.quoteId(c) + "), 0)")
                        .reduce((a, b) -> a + " + " + b).orElseThrow();
        return "SELECT COUNT(*) AS \"totalRows\", COALESCE(SUM(" + bytes + "), 0)::int8 AS \"totalBytes\"" + from();
    }

    /** @return {totalRows, totalBytes} */
    long[] totals(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(totalsStatement())) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2)};
        }
    }

    void start(Connection conn) throws SQLException {
        copy = conn.unwrap(PGConnection.class).getCopyAPI().copyOut(copyStatement());
        if (text) {
            tsv = new TsvCopyParser();
        } else {
            binary = new BinaryCopyParser();
        }
    }

    /**
     * Reads until at least {@code thresholdBytes} of COPY data were consumed since the last batch
     * and a row is complete, or the COPY ends.
     *
     * @return the batch; after the last one, the COPY has ended
     * @throws InterruptedException between two CopyData messages; what was read is kept for the
     *     next call
     * @throws IllegalStateException if a value cannot be converted or the stream is truncated
     */
    Batch read(long thresholdBytes) throws SQLException, InterruptedException {
        byte[] chunk;
        while ((chunk = copy.readFromCopy()) != null) {
            bufferedBytes += chunk.length;
            if (text) {
                tsv.parse(chunk, sink);
            } else {
                binary.parse(chunk, sink);
            }
            if (decodeError != null) {
                throw decodeError;
            }
            if (bufferedBytes >= thresholdBytes && !rows.isEmpty()) {
                return take(false);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while reading a backfill COPY");
            }
        }
        if ((binary != null && !binary.complete()) || col != 0) {
            throw new IllegalStateException("Truncated COPY stream for " + table.schema() + "." + table.name());
        }
        return take(true);
    }

    private Batch take(boolean last) {
        Batch b = new Batch(Collections.unmodifiableList(rows), bufferedBytes, estimatedSize, last);
        rows = new ArrayList<>();
        bufferedBytes = 0;
        estimatedSize = 0;
        return b;
    }

    private void field(byte[] b, int off, int len) {
        if (decodeError != null) {
            return;
        }
        try {
            if (b == null) {
                row[col] = null;
            } else {
                row[col] = decoders[col].decode(b, off, len);
                estimatedSize += VALUE_OVERHEAD + len;
            }
        } catch (RuntimeException e) {
            PublishedColumn c = table.columns().get(columns.get(col));
            decodeError = new IllegalStateException("Error converting " + table.schema() + "." + table.name() + "."
                    + c.name() + " (" + c.dataType() + "): " + e.getMessage(), e);
            return;
        }
        if (++col == row.length) {
            estimatedSize += rowOverhead;
            rows.add(Collections.unmodifiableList(Arrays.asList(row)));
            row = new Object[columns.size()];
            col = 0;
        }
    }
}
