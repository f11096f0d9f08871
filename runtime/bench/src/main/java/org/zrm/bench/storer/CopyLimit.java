package org.zrm.bench.storer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * The storer's physical limit (WORKLOADS.md, W3): {@code COPY} of the same change-log rows into a
 * table shaped like {@code changeLog} (same columns, types and primary key), in one transaction,
 * in text or binary form. The rows' bytes are built while streaming, as the storer builds its
 * JSON parameter while storing, so both sides pay for their encoding.
 */
final class CopyLimit {

    static final String TABLE = "bench_copy.\"changeLog\"";
    private static final int CHUNK = 1 << 20;
    private static final byte[] BINARY_HEADER = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0,
            0, 0, 0, 0, 0, 0, 0, 0};

    /** One change-log row: what the storer writes for a message. */
    record Row(String watermark, long pos, String change, String precommit) {
    }

    private CopyLimit() {
    }

    static void createTable(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA IF NOT EXISTS bench_copy");
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("CREATE TABLE " + TABLE + " (watermark TEXT, pos INT8, change JSON NOT NULL, precommit TEXT,"
                    + " PRIMARY KEY (watermark, pos))");
        }
    }

    static void truncate(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("TRUNCATE " + TABLE);
        }
    }

    /** Rows of one upstream transaction, as the storer derives them from the messages. */
    static Row[] rows(List<W3Fixture.Msg> tx) {
        Row[] rows = new Row[tx.size()];
        String w = null;
        for (int i = 0; i < rows.length; i++) {
            W3Fixture.Msg m = tx.get(i);
            String json = m.json();
            String type = m.message().type();
            int start = type.length() + 4; // ["<type>",
            String change;
            String precommit = null;
            if (type.equals("begin") || type.equals("commit")) {
                change = json.substring(start, json.lastIndexOf(','));
                if (type.equals("begin")) {
                    w = ((org.zrm.protocol.ChangeStreamMessage.BeginMessage) m.message()).commitWatermark();
                } else {
                    precommit = w;
                }
            } else {
                change = json.substring(start, json.length() - 1);
            }
            rows[i] = new Row(w, i, change, precommit);
        }
        return rows;
    }

    /** COPY in text format; returns the elapsed nanoseconds up to the commit. */
    static long copyText(Connection c, Row[] rows) throws SQLException {
        c.setAutoCommit(false);
        long t0 = System.nanoTime();
        CopyIn in = ((PGConnection) c).getCopyAPI().copyIn("COPY " + TABLE + " (watermark, pos, change, precommit) FROM STDIN");
        try {
            StringBuilder b = new StringBuilder(CHUNK + 16_384);
            for (Row r : rows) {
                b.append(r.watermark()).append('\t').append(r.pos()).append('\t');
                escape(b, r.change());
                b.append('\t').append(r.precommit() == null ? "\\N" : r.precommit()).append('\n');
                if (b.length() >= CHUNK) {
                    byte[] bytes = b.toString().getBytes(StandardCharsets.UTF_8);
                    in.writeToCopy(bytes, 0, bytes.length);
                    b.setLength(0);
                }
            }
            byte[] bytes = b.toString().getBytes(StandardCharsets.UTF_8);
            in.writeToCopy(bytes, 0, bytes.length);
            in.endCopy();
        } finally {
            if (in.isActive()) {
                in.cancelCopy();
            }
        }
        c.commit();
        long elapsed = System.nanoTime() - t0;
        c.setAutoCommit(true);
        return elapsed;
    }

    /** COPY in binary format (json's binary form is its text); returns the elapsed nanoseconds up to the commit. */
    static long copyBinary(Connection c, Row[] rows) throws SQLException {
        c.setAutoCommit(false);
        long t0 = System.nanoTime();
        CopyIn in = ((PGConnection) c).getCopyAPI().copyIn(
                "COPY " + TABLE + " (watermark, pos, change, precommit) FROM STDIN (FORMAT binary)");
        try {
            Out out = new Out(CHUNK + 16_384);
            out.write(BINARY_HEADER, 0, BINARY_HEADER.length);
            for (Row r : rows) {
                out.int16(4);
                out.text(r.watermark());
                out.int32(8);
                out.int64(r.pos());
                out.text(r.change());
                if (r.precommit() == null) {
                    out.int32(-1);
                } else {
                    out.text(r.precommit());
                }
                if (out.size() >= CHUNK) {
                    in.writeToCopy(out.buffer(), 0, out.size());
                    out.reset();
                }
            }
            out.int16(-1);
            in.writeToCopy(out.buffer(), 0, out.size());
            in.endCopy();
        } finally {
            if (in.isActive()) {
                in.cancelCopy();
            }
        }
        c.commit();
        long elapsed = System.nanoTime() - t0;
        c.setAutoCommit(true);
        return elapsed;
    }

    /**
     * Profile probe: the core's batch statement ({@code json_to_recordset} with one JSON parameter,
     * same SQL text) run back to back on the same rows without the queue or pipelining, in one
     * transaction. Returns {encode nanos, total nanos}.
     */
    static long[] jsonToRecordset(Connection c, Row[] rows, int batch) throws SQLException {
        String sql = "INSERT INTO " + TABLE + " (\"watermark\", \"pos\", \"change\", \"precommit\")"
                + " SELECT \"watermark\", \"pos\", \"change\"::json, \"precommit\""
                + " FROM json_to_recordset(?::json) AS x(\"watermark\" TEXT, \"pos\" INT8, \"change\" TEXT, \"precommit\" TEXT)";
        c.setAutoCommit(false);
        long t0 = System.nanoTime();
        long encode = 0;
        for (int off = 0; off < rows.length; off += batch) {
            long e0 = System.nanoTime();
            StringBuilder b = new StringBuilder(batch * 2600);
            b.append('[');
            for (int i = off; i < Math.min(rows.length, off + batch); i++) {
                Row r = rows[i];
                if (i > off) {
                    b.append(',');
                }
                b.append("{\"watermark\":");
                jsonString(b, r.watermark());
                b.append(",\"precommit\":");
                if (r.precommit() == null) {
                    b.append("null");
                } else {
                    jsonString(b, r.precommit());
                }
                b.append(",\"pos\":").append(r.pos()).append(",\"change\":");
                jsonString(b, r.change());
                b.append('}');
            }
            String json = b.append(']').toString();
            encode += System.nanoTime() - e0;
            try (java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, json);
                ps.executeUpdate();
            }
        }
        c.commit();
        long total = System.nanoTime() - t0;
        c.setAutoCommit(true);
        return new long[] {encode, total};
    }

    /** Profile probe: binary COPY in batches of {@code batch} rows, one COPY per batch, one transaction. */
    static long copyBinaryBatches(Connection c, Row[] rows, int batch) throws SQLException {
        c.setAutoCommit(false);
        long t0 = System.nanoTime();
        for (int off = 0; off < rows.length; off += batch) {
            CopyIn in = ((PGConnection) c).getCopyAPI().copyIn(
                    "COPY " + TABLE + " (watermark, pos, change, precommit) FROM STDIN (FORMAT binary)");
            Out out = new Out(batch * 2600);
            out.write(BINARY_HEADER, 0, BINARY_HEADER.length);
            for (int i = off; i < Math.min(rows.length, off + batch); i++) {
                Row r = rows[i];
                out.int16(4);
                out.text(r.watermark());
                out.int32(8);
                out.int64(r.pos());
                out.text(r.change());
                if (r.precommit() == null) {
                    out.int32(-1);
                } else {
                    out.text(r.precommit());
                }
            }
            out.int16(-1);
            in.writeToCopy(out.buffer(), 0, out.size());
            in.endCopy();
        }
        c.commit();
        long total = System.nanoTime() - t0;
        c.setAutoCommit(true);
        return total;
    }

    private static void jsonString(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"' || ch == '\\') {
                b.append('\\');
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
                continue;
            }
            b.append(ch);
        }
        b.append('"');
    }

    private static void escape(StringBuilder b, String s) {
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> b.append(ch);
            }
        }
    }

    /** A growable byte buffer with big-endian writers. */
    private static final class Out extends ByteArrayOutputStream {
        Out(int size) {
            super(size);
        }

        byte[] buffer() {
            return buf;
        }

        void int16(int v) {
            write(v >>> 8);
            write(v);
        }

        void int32(int v) {
            write(v >>> 24);
            write(v >>> 16);
            write(v >>> 8);
            write(v);
        }

        void int64(long v) {
            int32((int) (v >>> 32));
            int32((int) v);
        }

        void text(String s) {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            int32(bytes.length);
            write(bytes, 0, bytes.length);
        }
    }
}
