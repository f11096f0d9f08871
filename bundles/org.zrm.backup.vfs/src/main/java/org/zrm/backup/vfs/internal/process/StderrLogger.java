package org.zrm.backup.vfs.internal.process;

import java.io.IOException;
import java.io.InputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.vfs.internal.watermark.BoundedLineReader;

/**
 * Drains a reader child's stderr into this process's log, one log line per line, so the child
 * never blocks on a full pipe and its diagnostics (JVM errors, sqlite-jdbc, its own messages) end
 * up next to the monitor's. Logging rather than inheriting keeps the pid and component on every
 * line. A line longer than {@link #MAX_LINE_BYTES} is skipped with a note.
 */
final class StderrLogger implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(StderrLogger.class);
    static final int MAX_LINE_BYTES = 8 * 1024;

    private final InputStream stderr;
    private final long pid;

    StderrLogger(InputStream stderr, long pid) {
        this.stderr = stderr;
        this.pid = pid;
    }

    @Override
    public void run() {
        BoundedLineReader lines = new BoundedLineReader(stderr, MAX_LINE_BYTES);
        try (stderr) {
            while (true) {
                try {
                    String line = lines.readLine();
                    if (line == null) {
                        return;
                    }
                    LOG.info("vfs reader pid={} stderr: {}", pid, line);
                } catch (BoundedLineReader.LineTooLongException e) {
                    LOG.info("vfs reader pid={} stderr: (skipped a line longer than {} bytes)", pid, MAX_LINE_BYTES);
                    lines.skipLine();
                }
            }
        } catch (IOException e) {
            // the pipe is closed when the child is killed: nothing more to log
            LOG.debug("vfs reader pid={}: stderr closed: {}", pid, e.toString());
        }
    }
}
