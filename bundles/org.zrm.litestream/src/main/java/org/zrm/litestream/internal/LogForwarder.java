package org.zrm.litestream.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.secret.Secrets;

/**
 * Copies a litestream child's output into ZRM's log, one record per line, at the level litestream
 * gave the line ({@code level=WARN} in its text format, {@code "level":"WARN"} in JSON). Lines
 * without a level (Go's own panic output, usage text) are logged at WARN: litestream prints them
 * only when something is wrong.
 *
 * <p>Bound: a line longer than {@value #MAX_LINE_BYTES} bytes is cut there and marked with
 * {@code …}; the rest of it is read and dropped, so the child never blocks on a full pipe.
 */
final class LogForwarder {

    static final int MAX_LINE_BYTES = 8192;
    private static final Logger LOG = LoggerFactory.getLogger("org.zrm.litestream.process");
    private static final Pattern TEXT_LEVEL = Pattern.compile("(?:^|\\s)level=\"?([A-Za-z]+)");
    private static final Pattern JSON_LEVEL = Pattern.compile("\"level\"\\s*:\\s*\"([A-Za-z]+)\"");

    private LogForwarder() {
    }

    /** Starts a daemon thread that forwards {@code in} until it closes; the thread is returned. */
    static Thread start(String name, String prefix, InputStream in) {
        Thread t = new Thread(() -> {
            try {
                forward(prefix, in);
            } catch (IOException e) {
                // The pipe broke because the child died or was killed; its exit is reported elsewhere.
                LOG.debug("{}: output ended: {}", prefix, e.toString());
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void forward(String prefix, InputStream in) throws IOException {
        try (in) {
            byte[] line = new byte[MAX_LINE_BYTES];
            int len = 0;
            boolean cut = false;
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) >= 0) {
                for (int i = 0; i < n; i++) {
                    byte b = buf[i];
                    if (b == '\n') {
                        log(prefix, new String(line, 0, len, StandardCharsets.UTF_8), cut);
                        len = 0;
                        cut = false;
                    } else if (len < line.length) {
                        line[len++] = b;
                    } else {
                        cut = true;
                    }
                }
            }
            if (len > 0) {
                log(prefix, new String(line, 0, len, StandardCharsets.UTF_8), cut);
            }
        }
    }

    /** The SLF4J level of one line: {@code debug}, {@code info}, {@code warn} or {@code error}. */
    static String levelOf(String line) {
        Matcher m = JSON_LEVEL.matcher(line);
        if (!m.find()) {
            m = TEXT_LEVEL.matcher(line);
            if (!m.find()) {
                return "warn";
            }
        }
        return switch (m.group(1).toLowerCase(Locale.ROOT)) {
            case "debug", "trace" -> "debug";
            case "info" -> "info";
            case "warn", "warning" -> "warn";
            default -> "error"; // error, fatal, panic
        };
    }

    private static void log(String prefix, String text, boolean cut) {
        String line = text.strip();
        if (line.isEmpty()) {
            return;
        }
        line = Secrets.maskUrls(cut ? line + "…" : line);
        switch (levelOf(line)) {
            case "debug" -> LOG.debug("{}: {}", prefix, line);
            case "info" -> LOG.info("{}: {}", prefix, line);
            case "warn" -> LOG.warn("{}: {}", prefix, line);
            default -> LOG.error("{}: {}", prefix, line);
        }
    }
}
