package org.zrm.changesource.pg.internal.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ports of upstream {@code pg-copy-binary.test.ts}/{@code pg-copy.test.ts} parser cases, plus progress. */
class CopyParsersTest {

    private static byte[] binaryCopy(String... fieldsPerRowSeparatedByNull) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0});
        out.writeBytes(ByteBuffer.allocate(8).putInt(0).putInt(0).array());
        List<List<String>> rows = new ArrayList<>();
        rows.add(new ArrayList<>());
        for (String f : fieldsPerRowSeparatedByNull) {
            if ("|".equals(f)) {
                rows.add(new ArrayList<>());
            } else {
                rows.get(rows.size() - 1).add(f);
            }
        }
        for (List<String> row : rows) {
            out.writeBytes(ByteBuffer.allocate(2).putShort((short) row.size()).array());
            for (String f : row) {
                if (f == null) {
                    out.writeBytes(ByteBuffer.allocate(4).putInt(-1).array());
                } else {
                    byte[] b = f.getBytes(StandardCharsets.UTF_8);
                    out.writeBytes(ByteBuffer.allocate(4).putInt(b.length).array());
                    out.writeBytes(b);
                }
            }
        }
        out.writeBytes(ByteBuffer.allocate(2).putShort((short) -1).array());
        return out.toByteArray();
    }

    private static List<String> parseBinaryInChunks(byte[] data, int chunk) {
        BinaryCopyParser p = new BinaryCopyParser();
        List<String> fields = new ArrayList<>();
        for (int i = 0; i < data.length; i += chunk) {
            p.parse(Arrays.copyOfRange(data, i, Math.min(data.length, i + chunk)),
                    (b, o, l) -> fields.add(b == null ? null : new String(b, o, l, StandardCharsets.UTF_8)));
        }
        assertTrue(p.complete());
        return fields;
    }

    @Test
    void binaryParser_headerAndFieldsSplitAcrossChunks() {
        byte[] data = binaryCopy("a", null, "ü€", "|", "", "xyz", null);
        List<String> expected = Arrays.asList("a", null, "ü€", "", "xyz", null);
        for (int chunk : new int[] {1, 2, 3, 7, 19, 1000}) {
            assertEquals(expected, parseBinaryInChunks(data, chunk), "chunk " + chunk);
        }
    }

    @Test
    void binaryParser_rejectsBadSignatureAndFlags() {
        byte[] data = binaryCopy("a");
        data[0] = 'X';
        assertThrows(IllegalStateException.class, () -> new BinaryCopyParser().parse(data, (b, o, l) -> { }));
        byte[] flags = binaryCopy("a");
        flags[14] = 1;
        assertThrows(IllegalStateException.class, () -> new BinaryCopyParser().parse(flags, (b, o, l) -> { }));
    }

    @Test
    void binaryParser_truncatedStreamIsNotComplete() {
        byte[] data = binaryCopy("abc");
        BinaryCopyParser p = new BinaryCopyParser();
        p.parse(Arrays.copyOf(data, data.length - 4), (b, o, l) -> { });
        assertFalse(p.complete());
    }

    private static List<String> parseTsv(byte[] data, int chunk) {
        TsvCopyParser p = new TsvCopyParser();
        List<String> fields = new ArrayList<>();
        for (int i = 0; i < data.length; i += chunk) {
            p.parse(Arrays.copyOfRange(data, i, Math.min(data.length, i + chunk)),
                    (b, o, l) -> fields.add(b == null ? null : new String(b, o, l, StandardCharsets.UTF_8)));
        }
        return fields;
    }

    @Test
    void tsvParser_escapesNullsAndSplitMultibyteCharacters() {
        byte[] data = "a\\tb\t\\N\tü€\\\\\n\\n\\r\\b\\f\\v\t\n".getBytes(StandardCharsets.UTF_8);
        List<String> expected = Arrays.asList("a\tb", null, "ü€\\", "\n\r\b\f\u000b", "");
        for (int chunk : new int[] {1, 2, 3, 5, 1000}) {
            // QUIRK "TSV UTF-8 split across chunks" is fixed: chunk size 1 splits ü and €.
            assertEquals(expected, parseTsv(data, chunk), "chunk " + chunk);
        }
        assertThrows(IllegalStateException.class, () -> parseTsv("\\x\n".getBytes(StandardCharsets.UTF_8), 10));
    }

    @Test
    void progressSnapshot() {
        SyncProgress p = new SyncProgress();
        p.tables(2);
        p.estimate(1000, 1 << 20);
        p.copied(500, 1 << 19);
        p.tableDone();
        SyncProgress.Snapshot s = p.snapshot();
        assertEquals(1, s.tablesDone());
        assertEquals(2, s.tablesTotal());
        assertEquals(500, s.rows());
        assertEquals(1000, s.totalRowsEstimate());
        assertTrue(s.rowsPerSecond() > 0);
        assertTrue(s.eta() != null && s.eta().compareTo(Duration.ZERO) > 0);
        assertTrue(s.describe().contains("tables=1/2 rows=500/~1000"), s.describe());
    }
}
