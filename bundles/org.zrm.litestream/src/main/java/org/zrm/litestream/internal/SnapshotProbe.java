package org.zrm.litestream.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Counts the snapshots at the destination with {@code litestream snapshots <replica>}, in the
 * environment of {@code litestream replicate} (so it lists the same destination). Readiness waits
 * for the first one: until then a node restoring the backup would find nothing.
 *
 * <p>Bounds: the listing is killed after {@link #TIMEOUT}; only the first {@value #MAX_OUTPUT}
 * bytes of output are kept (a listing is a few lines per generation).
 */
final class SnapshotProbe {

    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final int MAX_OUTPUT = 1 << 20;

    private SnapshotProbe() {
    }

    /**
     * @return the number of snapshots listed
     * @throws IOException if litestream cannot be run, fails or times out
     */
    static int count(LitestreamSettings s, Map<String, String> inherited) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(List.of(s.executable().toString(), "snapshots", s.replicaFile().toString()))
                .redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(s.environment(inherited, null));
        Process p = pb.start();
        // The watchdog: a hung listing is killed, which also ends the read below.
        p.onExit().completeOnTimeout(p, TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).thenRun(p::destroyForcibly);
        try {
            p.getOutputStream().close();
            byte[] out;
            try (InputStream in = p.getInputStream()) {
                out = in.readNBytes(MAX_OUTPUT);
            }
            if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("litestream snapshots did not finish within " + TIMEOUT.toSeconds() + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException("litestream snapshots exited with code " + p.exitValue() + ": "
                        + new String(out, StandardCharsets.UTF_8).strip());
            }
            return parse(new String(out, StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
        }
    }

    /** Rows of the listing: lines of at least five columns other than the header ("replica generation …"). */
    static int parse(String output) {
        int n = 0;
        for (String line : output.split("\n")) {
            String[] cols = line.strip().split("\\s+");
            if (cols.length >= 5 && !cols[0].equals("replica") && !line.contains("level=")) {
                n++;
            }
        }
        return n;
    }
}
