package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class RuntimeSupervisorTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final List<String> events = new ArrayList<>();

    @Test
    void stopsTheRuntimeGracefullyThenPostgres() throws Exception {
        RuntimeSupervisor supervisor = new RuntimeSupervisor(Duration.ofSeconds(10), new PrintStream(out, true, StandardCharsets.UTF_8));
        Process child = new ProcessBuilder("sleep", "60").start();
        supervisor.adoptPostgres(() -> events.add("postgres stopped, child alive=" + child.isAlive()));
        supervisor.adoptChild(child);
        supervisor.close();
        assertFalse(child.isAlive());
        assertEquals(143, child.exitValue(), "SIGTERM");
        assertEquals(List.of("postgres stopped, child alive=false"), events, "PostgreSQL goes last");
        supervisor.close();
        assertEquals(1, events.size(), "idempotent");
    }

    @Test
    void killsARuntimeThatIgnoresSigterm() throws Exception {
        RuntimeSupervisor supervisor = new RuntimeSupervisor(Duration.ofMillis(300), new PrintStream(out, true, StandardCharsets.UTF_8));
        // The child announces that its trap is installed; only then can SIGTERM be shown to be ignored.
        Process child = new ProcessBuilder("sh", "-c", "trap '' TERM; echo ready; while true; do sleep 1; done").start();
        assertEquals("ready", new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                StandardCharsets.US_ASCII)).readLine());
        supervisor.adoptChild(child);
        long start = System.nanoTime();
        supervisor.close();
        assertFalse(child.isAlive());
        // Killed by a signal (128 + n): SIGKILL, or SIGPIPE when the shell's pending output meets
        // the closed pipe first. Either way it did not exit on its own after SIGTERM.
        assertTrue(child.exitValue() > 128, "exit " + child.exitValue());
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toSeconds() < 10);
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("killing it"), out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void tellsWhetherTheRuntimeEndedInOrderBeforePostgresStops() throws Exception {
        assertEquals(List.of("clean=true", "postgres"), exitReport("sleep 60", Duration.ofSeconds(10)), "SIGTERM");
        assertEquals(List.of("clean=true", "postgres"), exitReport("exit 3", Duration.ofSeconds(10)), "exited by itself");
        assertEquals(List.of("clean=false", "postgres"), exitReport("kill -9 $$", Duration.ofSeconds(10)),
                "died of SIGKILL (the OOM killer)");
        assertEquals(List.of("clean=false", "postgres"), exitReport("kill -6 $$", Duration.ofSeconds(10)),
                "died of SIGABRT (a crash)");
        assertEquals(List.of("clean=false", "postgres"),
                exitReport("trap '' TERM; echo ready; while true; do sleep 1; done", Duration.ofMillis(300)),
                "ignored SIGTERM and was killed");
        // Once the grace period is over the launcher kills the child's children first; this shell
        // then writes to its stderr, which Process.destroy() closed, and may die of SIGPIPE (141)
        // before its own SIGKILL arrives. It was killed all the same.
        assertEquals(List.of("clean=false", "postgres"),
                exitReport("trap '' TERM; echo ready; sleep 60; echo after >&2; sleep 60", Duration.ofMillis(300)),
                "ignored SIGTERM, was killed, and may have died of SIGPIPE first");
    }

    private List<String> exitReport(String script, Duration grace) throws Exception {
        List<String> seen = new ArrayList<>();
        RuntimeSupervisor supervisor = new RuntimeSupervisor(grace, new PrintStream(out, true, StandardCharsets.UTF_8));
        Process child = new ProcessBuilder("sh", "-c", script).start();
        if (script.contains("echo ready")) { // SIGTERM can be shown to be ignored only once the trap is set
            assertEquals("ready", new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine());
        }
        supervisor.adoptPostgres(() -> seen.add("postgres"));
        supervisor.onChildExit(clean -> seen.add("clean=" + clean));
        supervisor.adoptChild(child);
        if (!script.contains("sleep")) {
            child.waitFor(); // ended on its own before the launcher stops it
        }
        supervisor.close();
        return seen;
    }

    @Test
    void refusesWhatArrivesAfterShutdownAndStopsIt() throws Exception {
        RuntimeSupervisor supervisor = new RuntimeSupervisor(Duration.ofSeconds(1), new PrintStream(out, true, StandardCharsets.UTF_8));
        supervisor.close();
        assertThrows(LaunchException.class, () -> supervisor.adoptPostgres(() -> events.add("stopped")));
        assertEquals(List.of("stopped"), events);
        Process child = new ProcessBuilder("sleep", "60").start();
        assertThrows(LaunchException.class, () -> supervisor.adoptChild(child));
        child.waitFor();
        assertFalse(child.isAlive());
    }
}
