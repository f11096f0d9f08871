package org.zrm.storer.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.zrm.changelog.ChangeLogEntry;

/**
 * Encodes a batch of rows as the complete input of
 * {@code COPY "<schema>"."changeLog" ("watermark","pos","change","precommit") FROM STDIN (FORMAT binary)}:
 * signature, header, one tuple per row, trailer.
 *
 * <p>Why binary and not text COPY: the text format would need every backslash, tab and newline of
 * the change text escaped and un-escaped again. In the binary format a {@code text} or {@code json}
 * field is just its UTF-8 bytes (Postgres' {@code json_recv} takes the text as is and still
 * validates it), so the change is sent, checked and stored byte for byte as the live frame's text,
 * without any escaping on either side.
 */
final class BatchCopy {

    /** {@code PGCOPY\n\377\r\n\0}, flags 0, header extension length 0. */
    private static final byte[] HEADER = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0,
            0, 0, 0, 0, 0, 0, 0, 0};
    private static final int FIELDS = 4;

    private byte[] buf;
    private int size;

    private BatchCopy(byte[] buf) {
        this.buf = buf;
    }

    /** @return the COPY input for {@code rows} in a new array, which may be longer than {@code length()} */
    static BatchCopy encode(List<ChangeLogEntry> rows) {
        return encode(rows, new CopyBuffers());
    }

    /**
     * @param buffers where the array comes from; hand {@link #buffer()} back to it with
     *     {@link CopyBuffers#release} once the COPY has been sent
     * @return the COPY input for {@code rows}; the array may be longer than {@code length()}
     */
    static BatchCopy encode(List<ChangeLogEntry> rows, CopyBuffers buffers) {
        long estimate = HEADER.length + 2;
        for (ChangeLogEntry row : rows) {
            // Exact for ASCII text, which W3-like and most change text is; the buffer grows otherwise.
            estimate += 2 + 4 + row.watermark().length() + 4 + 8 + 4 + row.change().length() + 4
                    + row.watermark().length();
        }
        BatchCopy b = new BatchCopy(buffers.acquire((int) Math.min(Integer.MAX_VALUE - 16, estimate)));
        b.bytes(HEADER);
        for (ChangeLogEntry row : rows) {
            b.int16(FIELDS);
            b.text(row.watermark());
            b.int32(8);
            b.int64(row.pos());
            b.text(row.change());
            String precommit = BatchJson.precommit(row);
            if (precommit == null) {
                b.int32(-1); // NULL
            } else {
                b.text(precommit);
            }
        }
        b.int16(-1); // trailer
        return b;
    }

    byte[] buffer() {
        return buf;
    }

    int length() {
        return size;
    }

    private void ensure(int more) {
        if (buf.length - size < more) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
        }
    }

    private void bytes(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, size, b.length);
        size += b.length;
    }

    private void text(String s) {
        // For a Latin-1-compact (here: ASCII) string this is one intrinsic copy.
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int32(b.length);
        bytes(b);
    }

    private void int16(int v) {
        ensure(2);
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) v;
    }

    private void int32(int v) {
        ensure(4);
        buf[size++] = (byte) (v >>> 24);
        buf[size++] = (byte) (v >>> 16);
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) v;
    }

    private void int64(long v) {
        int32((int) (v >>> 32));
        int32((int) v);
    }
}
