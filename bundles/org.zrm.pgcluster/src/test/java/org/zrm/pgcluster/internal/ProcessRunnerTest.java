package org.zrm.pgcluster.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.zrm.pgcluster.PgClusterException;

class ProcessRunnerTest {
    private final ProcessRunner runner = new ProcessRunner(Map.of("PATH", "/usr/bin:/bin", "GREETING", "hi"), Path.of("/"));

    @Test
    void capturesExitCodeAndCombinedOutputWithTheGivenEnvironmentOnly() {
        ProcessRunner.Result r = runner.run(List.of("sh", "-c", "echo out $GREETING; echo err >&2; echo HOME=$HOME; exit 3"),
                Duration.ofSeconds(10));
        assertEquals(3, r.exitCode());
        assertTrue(r.output().contains("out hi"), r.output());
        assertTrue(r.output().contains("err"), r.output());
        assertTrue(r.output().contains("HOME=\n"), "environment is not inherited: " + r.output());
        assertTrue(r.describe().contains("exited with 3"), r.describe());
    }

    @Test
    void keepsOnlyTheTailOfLargeOutput() {
        ProcessRunner.Result r = runner.run(List.of("sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x; echo END"),
                Duration.ofSeconds(10));
        assertTrue(r.succeeded());
        assertTrue(r.output().length() < ProcessRunner.MAX_OUTPUT_BYTES + 100, "length " + r.output().length());
        assertTrue(r.output().strip().endsWith("END"));
        assertTrue(r.output().startsWith("[... "), "marks the cut");
    }

    @Test
    void killsAToolThatOverrunsItsTimeout() {
        long start = System.nanoTime();
        PgClusterException e = assertThrows(PgClusterException.class,
                () -> runner.run(List.of("sh", "-c", "echo started; sleep 30"), Duration.ofMillis(500)));
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toSeconds() < 10, "bounded wait");
        assertTrue(e.getMessage().contains("did not finish within"), e.getMessage());
        assertTrue(e.getMessage().contains("started"), "output is reported: " + e.getMessage());
    }

    @Test
    void reportsACommandThatCannotStart() {
        PgClusterException e = assertThrows(PgClusterException.class,
                () -> runner.run(List.of("/nonexistent/tool"), Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains("/nonexistent/tool"), e.getMessage());
    }
}
