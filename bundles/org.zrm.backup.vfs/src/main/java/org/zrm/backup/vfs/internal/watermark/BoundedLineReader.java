package org.zrm.backup.vfs.internal.watermark;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads UTF-8 lines from a pipe with a bound on the line length, so a runaway peer (a line without
 * end) cannot exhaust the heap. Lines end with {@code \n}; a trailing {@code \r} is dropped. Not
 * thread-safe: one reading thread.
 */
public final class BoundedLineReader {

    /** A line exceeded the bound; the bytes read so far are discarded, the rest is still unread. */
    public static final class LineTooLongException extends IOException {
        private static final long serialVersionUID = 1L;

        LineTooLongException(int maxBytes) {
            super("line longer than " + maxBytes + " bytes");
        }
    }

    private final InputStream in;
    private final int maxBytes;
    private final byte[] buffer = new byte[8192];
    private int position;
    private int limit;

    /**
     * @param in the stream; not closed by this reader
     * @param maxBytes the longest line accepted, without its terminator
     */
    public BoundedLineReader(InputStream in, int maxBytes) {
        this.in = in;
        this.maxBytes = maxBytes;
    }

    /**
     * @return the next line, or {@code null} at end of stream (a final line without terminator is
     *     returned first)
     * @throws LineTooLongException as soon as the current line exceeds the bound; the caller either
     *     gives up on the stream or calls {@link #skipLine()}
     */
    public String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(128);
        while (true) {
            if (position == limit && !fill()) {
                return line.size() == 0 ? null : decode(line);
            }
            int start = position;
            while (position < limit && buffer[position] != '\n') {
                position++;
            }
            int length = position - start;
            if (line.size() + length > maxBytes) {
                throw new LineTooLongException(maxBytes);
            }
            line.write(buffer, start, length);
            if (position < limit) {
                position++; // the terminator
                return decode(line);
            }
        }
    }

    /** Discards input up to and including the next line terminator (or to end of stream). */
    public void skipLine() throws IOException {
        while (true) {
            if (position == limit && !fill()) {
                return;
            }
            while (position < limit) {
                if (buffer[position++] == '\n') {
                    return;
                }
            }
        }
    }

    private boolean fill() throws IOException {
        int n = in.read(buffer);
        if (n <= 0) {
            return false;
        }
        position = 0;
        limit = n;
        return true;
    }

    private static String decode(ByteArrayOutputStream line) {
        String s = line.toString(StandardCharsets.UTF_8);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }
}
