package org.zrm.changesource.pg.internal.sync;

import java.util.Arrays;

/**
 * Incremental parser of {@code COPY … TO STDOUT WITH (FORMAT binary)}: header
 * {@code PGCOPY\n\377\r\n\0}, flags (must be 0), extension area, then tuples of int16 field count
 * (−1 = trailer) and per field int32 length (−1 = NULL) + bytes. Chunk boundaries may fall
 * anywhere. An unconsumed remainder is kept, so memory is bounded by one row plus one chunk.
 */
public final class BinaryCopyParser {

    private static final byte[] SIGNATURE = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0};

    private byte[] buf = new byte[0];
    private int start;
    private int end;
    private boolean headerDone;
    private int fieldsRemaining;
    private boolean trailer;

    /** Feeds a chunk and emits every complete field. */
    public void parse(byte[] chunk, CopyFieldSink sink) {
        append(chunk);
        if (!headerDone && !parseHeader()) {
            return;
        }
        while (!trailer) {
            if (fieldsRemaining == 0) {
                if (end - start < 2) {
                    return;
                }
                int count = BinaryReader.int16(buf, start);
                if (count == -1) {
                    trailer = true;
                    start += 2;
                    return;
                }
                start += 2;
                fieldsRemaining = count;
            }
            while (fieldsRemaining > 0) {
                if (end - start < 4) {
                    return;
                }
                int len = BinaryReader.int32(buf, start);
                if (len == -1) {
                    start += 4;
                    sink.field(null, 0, 0);
                } else {
                    if (end - start - 4 < len) {
                        return;
                    }
                    sink.field(buf, start + 4, len);
                    start += 4 + len;
                }
                fieldsRemaining--;
            }
        }
    }

    /** Whether the stream ended cleanly (trailer seen, no partial row). */
    public boolean complete() {
        return trailer && fieldsRemaining == 0;
    }

    private boolean parseHeader() {
        if (end - start < 19) {
            return false;
        }
        for (int i = 0; i < SIGNATURE.length; i++) {
            if (buf[start + i] != SIGNATURE[i]) {
                throw new IllegalStateException("Invalid PGCOPY binary signature");
            }
        }
        int flags = BinaryReader.int32(buf, start + 11);
        if (flags != 0) {
            throw new IllegalStateException("Unsupported PGCOPY flags: " + flags);
        }
        int ext = BinaryReader.int32(buf, start + 15);
        if (end - start < 19 + ext) {
            return false;
        }
        start += 19 + ext;
        headerDone = true;
        return true;
    }

    private void append(byte[] chunk) {
        if (start == end) {
            buf = chunk;
            start = 0;
            end = chunk.length;
            return;
        }
        int remaining = end - start;
        byte[] nb = new byte[remaining + chunk.length];
        System.arraycopy(buf, start, nb, 0, remaining);
        System.arraycopy(chunk, 0, nb, remaining, chunk.length);
        buf = nb;
        start = 0;
        end = nb.length;
    }

    @Override
    public String toString() {
        return "BinaryCopyParser" + Arrays.toString(new int[] {start, end, fieldsRemaining});
    }
}
