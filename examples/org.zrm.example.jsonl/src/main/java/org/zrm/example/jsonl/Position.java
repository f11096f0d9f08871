package org.zrm.example.jsonl;

import org.zrm.watermark.LexiVersion;

/**
 * A place in the change files: line {@code line} (from 1) of {@code changes-<file>.jsonl}, and the
 * watermark that names it.
 *
 * <p><b>SPI obligation: watermark order.</b> ZRM compares watermarks as plain strings and requires
 * commit watermarks to increase strictly. A {@link LexiVersion} of {@code file << 32 | line} does
 * that: LexiVersion strings sort as the numbers they encode, and the number grows with every line
 * and with every new file. It is also stable, so replaying from a watermark yields the same
 * watermarks again.
 *
 * @param file the file number, 1 to {@link #MAX_FILE}; 0 only in {@link #START}
 * @param line the line number in that file, 1 to {@link #MAX_LINE}; 0 only in {@link #START}
 */
public record Position(int file, long line) implements Comparable<Position> {

    /** Before the first line of the first file: the watermark of a snapshot of no lines. */
    public static final Position START = new Position(0, 0);

    /** Largest file number (six digits in the file name, and 31 bits in the watermark). */
    public static final int MAX_FILE = 999_999;

    /** Largest line number in one file (32 bits in the watermark). */
    public static final long MAX_LINE = 0xFFFF_FFFFL;

    public Position {
        if (file < 0 || file > MAX_FILE || line < 0 || line > MAX_LINE || (file == 0) != (line == 0)) {
            throw new IllegalArgumentException("no such position: file " + file + ", line " + line);
        }
    }

    /** @return the watermark naming this position */
    public String watermark() {
        return LexiVersion.encode(((long) file << 32) | line);
    }

    /**
     * @param watermark a watermark made by {@link #watermark()}
     * @return its position
     * @throws IllegalArgumentException if it is not such a watermark (for example one of another
     *     source, after the change source was switched)
     */
    public static Position of(String watermark) {
        long v;
        try {
            v = LexiVersion.decodeUnsignedLong(watermark);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a watermark of the jsonl source: " + watermark, e);
        }
        if (v < 0 || !watermark.equals(LexiVersion.encode(v))) {
            throw new IllegalArgumentException("not a watermark of the jsonl source: " + watermark);
        }
        return new Position((int) (v >>> 32), v & MAX_LINE);
    }

    @Override
    public int compareTo(Position o) {
        return file != o.file ? Integer.compare(file, o.file) : Long.compare(line, o.line);
    }

    @Override
    public String toString() {
        return ChangeDirectory.fileName(file) + ":" + line;
    }
}
