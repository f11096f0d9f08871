package org.zrm.example.jsonl;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Reads the complete lines of a file that is being appended to. A line is complete when its
 * {@code \n} has been written; the bytes of an incomplete last line are kept, and the line is
 * returned once its end arrives.
 *
 * <p><b>Bound.</b> A line longer than {@code maxLineBytes} is an error, not buffered further: the
 * reader holds at most one line plus one read buffer.
 *
 * <p>Not thread-safe.
 */
final class LineReader implements AutoCloseable {

    private final Path file;
    private final int maxLineBytes;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private long lineNumber; // of the last complete line returned

    LineReader(Path file, int maxLineBytes) throws IOException {
        this.file = file;
        this.maxLineBytes = maxLineBytes;
        this.channel = FileChannel.open(file, StandardOpenOption.READ);
        buffer.flip(); // empty
    }

    /** @return the number of the last line returned by {@link #next()}, 0 before the first */
    long lineNumber() {
        return lineNumber;
    }

    /** @return {@code true} if bytes of a line without its newline have been read */
    boolean hasPartialLine() {
        return partial.size() > 0;
    }

    /**
     * @return the next complete line without its newline, or {@code null} if the file holds no
     *     further complete line yet
     * @throws BadInputException if the line is longer than the bound or not UTF-8
     * @throws IOException if the file cannot be read
     */
    String next() throws IOException {
        while (true) {
            while (buffer.hasRemaining()) {
                byte b = buffer.get();
                if (b == '\n') {
                    lineNumber++;
                    byte[] bytes = partial.toByteArray();
                    partial.reset();
                    return decode(bytes);
                }
                if (partial.size() >= maxLineBytes) {
                    throw new BadInputException(where(lineNumber + 1) + ": line longer than the bound of "
                            + maxLineBytes + " bytes (maxLineBytes)");
                }
                partial.write(b);
            }
            buffer.clear();
            int n = channel.read(buffer);
            buffer.flip();
            if (n <= 0) {
                return null;
            }
        }
    }

    private String decode(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BadInputException(where(lineNumber) + ": not UTF-8");
        }
    }

    /** @return {@code changes-000001.jsonl:17} for line 17 of this file */
    String where(long line) {
        return file.getFileName() + ":" + line;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
