package org.zrm.backup.replica.internal;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what slf4j-simple (the test logging backend) prints: it writes to whatever
 * {@code System.err} is at the time of each log call, so swapping the stream captures the lines.
 */
final class LogCapture implements AutoCloseable {

    private final PrintStream original = System.err;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

    LogCapture() {
        System.setErr(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    }

    synchronized String text() {
        return buffer.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        System.setErr(original);
        original.print(text());
    }
}
