package org.zrm.pgcluster.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Reads the end of a file that may be large (server logs grow across runs). */
public final class FileTail {
    private FileTail() {}

    /**
     * Returns at most the last {@code maxBytes} bytes of {@code file} as text, prefixed with a
     * marker when the beginning was cut; an empty string when the file does not exist.
     */
    public static String read(Path file, int maxBytes) {
        return read(file, maxBytes, 0);
    }

    /**
     * Like {@link #read(Path, int)}, but ignores the first {@code fromOffset} bytes: a log that is
     * appended to across runs is read only from where this run began.
     */
    public static String read(Path file, int maxBytes, long fromOffset) {
        if (!Files.exists(file)) {
            return "";
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            long start = Math.max(Math.min(fromOffset, size), size - maxBytes);
            ByteBuffer buffer = ByteBuffer.allocate((int) (size - start));
            while (buffer.hasRemaining() && channel.read(buffer, start + buffer.position()) > 0) {
                // read until the buffer is full or the file ends (it may shrink concurrently)
            }
            String text = new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
            return start > fromOffset ? "[... " + (start - fromOffset) + " earlier bytes omitted ...]\n" + text : text;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** @return the current size of {@code file}, 0 when it does not exist */
    public static long size(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the size of " + file, e);
        }
    }
}
