package org.zrm.bench.e2e;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A running zero-cache replication manager (see {@link ZeroCachePeer}): its process tree (the
 * runner forks the dispatcher, which forks the change-streamer worker), its change-streamer port
 * and its log.
 */
final class ZeroCacheProcess implements ChangeStreamerProcess {

    /** Initial sync of the benchmark's table included; the runtime gets 120 s, zero-cache is slower to start. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(180);
    private static final int MAX_QUOTED = 5;
    private static final int MAX_QUOTED_CHARS = 400;

    private final Process process;
    private final int port;
    private final Path log;
    /** Where this process's lines start in the (appended) log file. */
    private final long logStart;

    /** @param logStart the log file's size before the process started: its own lines follow */
    ZeroCacheProcess(Process process, int port, Path log, long logStart) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.logStart = logStart;
    }

    void awaitReady() throws IOException, InterruptedException {
        HealthCheck.await(process, port, READY_TIMEOUT, "zero-cache (its change streamer)", log);
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public Path log() {
        return log;
    }

    /**
     * What zero-cache's log (JSON lines, see {@link ZeroCachePeer}) says since this process
     * started: the number of warnings and errors, and of flow-control events that show subscribers
     * out of step: {@code consensusTimeoutReleases} (a majority of subscribers had acked a
     * flow-control checkpoint and the rest were waited for only the consensus padding, then left
     * behind) and {@code slowMajorityWaits} (a checkpoint waited over a second for a majority).
     * The first few such lines are quoted. zero-cache offers no status endpoint on its
     * change-streamer port, so its log is the only report.
     */
    @Override
    public Object statusSummary() {
        Map<String, Object> summary = new LinkedHashMap<>();
        int warn = 0;
        int error = 0;
        int released = 0;
        int slowMajority = 0;
        int restoreNotices = 0;
        List<String> quoted = new ArrayList<>();
        ObjectMapper mapper = new ObjectMapper();
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            f.seek(logStart);
            String raw;
            while ((raw = f.readLine()) != null) {
                if (!raw.startsWith("{")) {
                    continue; // not a log entry: e.g. a stack trace Node printed itself
                }
                // readLine decodes bytes as Latin-1; the log is UTF-8.
                JsonNode entry;
                try {
                    entry = mapper.readTree(new String(raw.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
                } catch (IOException notJson) {
                    continue; // a line that only starts like JSON; not one of zero-cache's entries
                }
                String level = entry.path("level").asText();
                String message = entry.path("message").asText();
                boolean notable = true;
                if (message.contains("still pending")) {
                    released++;
                } else if (message.startsWith("waiting for at least")) {
                    slowMajority++;
                    notable = false;
                } else if (isRestoreWithoutBackup(entry, message)) {
                    restoreNotices++;
                    notable = false;
                } else if (level.equals("WARN")) {
                    warn++;
                } else if (level.equals("ERROR")) {
                    error++;
                } else {
                    notable = false;
                }
                if (notable && quoted.size() < MAX_QUOTED) {
                    String line = level + " " + message;
                    quoted.add(line.length() > MAX_QUOTED_CHARS ? line.substring(0, MAX_QUOTED_CHARS) + "..." : line);
                }
            }
        } catch (IOException e) {
            return "log unreadable: " + e;
        }
        summary.put("consensusTimeoutReleases", released);
        summary.put("slowMajorityWaits", slowMajority);
        summary.put("restoreWithoutBackupNotices", restoreNotices);
        summary.put("warnings", warn);
        summary.put("errors", error);
        summary.put("firstNotableLines", quoted);
        summary.put("log", log.toString());
        return summary;
    }

    /**
     * On a restart with a non-empty change log, zero-cache tries to restore its replica from a
     * litestream backup before anything else; none is configured here, so it logs a warning and an
     * error ("Missing --litestream-executable", "resyncing the replica") and then carries on with
     * the replica file it has (it does not resync: the stream starts from the replica's
     * watermark). Counted apart so that they are not read as failures of the run.
     */
    private static boolean isRestoreWithoutBackup(JsonNode entry, String message) {
        return entry.path("errorMsg").asText().contains("litestream-executable")
                || message.contains("litestream-executable");
    }

    /**
     * SIGTERM to the runner, which stops its workers and exits; after a minute, or if a worker
     * outlives it, the remaining processes of the tree are killed. The tree is listed before the
     * runner goes, since orphaned workers are no longer its descendants.
     */
    @Override
    public void close() throws InterruptedException {
        ProcessTree.stop(process);
    }
}
