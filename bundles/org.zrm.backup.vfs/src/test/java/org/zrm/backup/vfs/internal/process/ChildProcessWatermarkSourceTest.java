package org.zrm.backup.vfs.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;

/**
 * The parent side of the reader child (spec §3.3, §3.5 {@code vfs-watermark-worker.test.ts}) against
 * a fake child: {@code fake-reader.sh <mode>} speaking the JSON lines.
 */
class ChildProcessWatermarkSourceTest {

    /** Generous for successful reads on a busy machine; never waited for in full. */
    private static final Duration PATIENT = Duration.ofSeconds(20);
    /** For the tests that time out: each waits this long. */
    private static final Duration SHORT = Duration.ofMillis(2000);
    private static final int SIGKILL_EXIT = 128 + 9;
    private static final int SIGTERM_EXIT = 128 + 15;

    private final List<Process> started = new CopyOnWriteArrayList<>();
    private final List<ChildProcessWatermarkSource> sources = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Process> firstStarted = new CompletableFuture<>();

    @AfterEach
    void closeAll() {
        sources.forEach(ChildProcessWatermarkSource::close);
        started.forEach(Process::destroyForcibly);
    }

    private ChildProcessWatermarkSource source(String mode, Duration timeout) {
        return source(mode, timeout, Duration.ofSeconds(5), ReaderProcess.MAX_LINE_BYTES);
    }

    private ChildProcessWatermarkSource source(String mode, Duration timeout, Duration closeGrace, int maxLineBytes) {
        ReaderLauncher launcher = new ReaderLauncher(ReaderCommand.of(List.of("/bin/sh", script().toString(), mode)),
                new ReaderEnvironment("s3://bucket/db", "debug", "", "/opt/litestream-vfs.so"), builder -> {
                    Process p = builder.start();
                    started.add(p);
                    firstStarted.complete(p);
                    return p;
                }, maxLineBytes);
        ChildProcessWatermarkSource source = new ChildProcessWatermarkSource(launcher, timeout, closeGrace);
        sources.add(source);
        return source;
    }

    static Path script() {
        try {
            return Path.of(ChildProcessWatermarkSourceTest.class.getResource("fake-reader.sh").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int exitCode(Process p) throws Exception {
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "the child should have exited");
        return p.exitValue();
    }

    @Test
    void workerSourceWaitsForReadyAndReadsWatermark() throws Exception {
        ChildProcessWatermarkSource source = source("respond", PATIENT);

        assertEquals(new BackupWatermark("01", 123L, "0000000000000004", 2, 1000), source.readWatermark());
        assertEquals("02", source.readWatermark().watermark());
        assertEquals(1, started.size(), "one child serves every read");
    }

    @Test
    void rejectsRequestWhenSourceThrowsAndKeepsTheChild() throws Exception {
        ChildProcessWatermarkSource source = source("error", PATIENT);

        assertEquals("boom", assertThrows(IOException.class, source::readWatermark).getMessage());
        assertEquals("boom", assertThrows(IOException.class, source::readWatermark).getMessage());
        assertEquals(1, started.size());
        assertTrue(started.get(0).isAlive());
    }

    @Test
    void responseWithoutResultIsAnError() {
        ChildProcessWatermarkSource source = source("missing-result", PATIENT);

        assertEquals("backup watermark response missing result",
                assertThrows(IOException.class, source::readWatermark).getMessage());
    }

    @Test
    void malformedResultIsAnError() {
        ChildProcessWatermarkSource source = source("malformed", PATIENT);

        String message = assertThrows(IOException.class, source::readWatermark).getMessage();
        assertTrue(message.startsWith("malformed backup watermark result: "), message);
    }

    @Test
    void ignoresResponsesToOtherRequests() throws Exception {
        ChildProcessWatermarkSource source = source("mismatched", PATIENT);

        assertEquals("01", source.readWatermark().watermark());
        assertEquals("02", source.readWatermark().watermark());
    }

    @Test
    void ignoresOutputThatIsNotProtocol() throws Exception {
        ChildProcessWatermarkSource source = source("noise", PATIENT);

        assertEquals("01", source.readWatermark().watermark());
        assertEquals("02", source.readWatermark().watermark());
    }

    @Test
    void timesOutWhenNoResponseArrivesAndKillsTheWorker() throws Exception {
        ChildProcessWatermarkSource source = source("hang", SHORT);

        IOException e = assertThrows(WatermarkTimeoutException.class, source::readWatermark);
        assertEquals("timed out waiting 2000 ms for backup watermark response", e.getMessage());
        // the fake ignores SIGTERM: only SIGKILL ends it
        assertEquals(SIGKILL_EXIT, exitCode(started.get(0)));
    }

    @Test
    void workerSourceRecreatesWorkerAfterTimeout() throws Exception {
        ChildProcessWatermarkSource source = source("hang", SHORT);

        assertThrows(WatermarkTimeoutException.class, source::readWatermark);
        assertThrows(WatermarkTimeoutException.class, source::readWatermark);

        assertEquals(2, started.size());
        assertEquals(SIGKILL_EXIT, exitCode(started.get(0)));
        assertEquals(SIGKILL_EXIT, exitCode(started.get(1)));
    }

    @Test
    void startsANewChildAfterTheChildExited() throws Exception {
        ChildProcessWatermarkSource source = source("exit-after-response", PATIENT);

        assertEquals("01", source.readWatermark().watermark());
        assertEquals(0, exitCode(started.get(0)));
        assertEquals("01", source.readWatermark().watermark());
        assertEquals(2, started.size());
    }

    @Test
    void childExitingBeforeReadyFailsTheReadWithItsExitCode() {
        ChildProcessWatermarkSource source = source("exit-before-ready", PATIENT);

        assertEquals("backup watermark reader exited before ready (code=3)",
                assertThrows(IOException.class, source::readWatermark).getMessage());
        assertThrows(IOException.class, source::readWatermark);
        assertEquals(2, started.size(), "the next read starts a new child");
    }

    /** Upstream waits for ready forever (spec §3.3 BUG): here the probe timeout bounds it. */
    @Test
    void readyHandshakeIsBoundedByTheProbeTimeout() throws Exception {
        ChildProcessWatermarkSource source = source("never-ready", SHORT);

        String message = assertThrows(IOException.class, source::readWatermark).getMessage();
        assertTrue(message.matches("backup watermark reader \\(pid \\d+\\) did not send ready within 2000 ms; killed it"),
                message);
        assertEquals(SIGKILL_EXIT, exitCode(started.get(0)));

        assertThrows(IOException.class, source::readWatermark);
        assertEquals(2, started.size(), "the next read starts a new child");
    }

    @Test
    void aLineLongerThanTheBoundKillsTheChild() throws Exception {
        ChildProcessWatermarkSource source = source("huge-line", PATIENT, Duration.ofSeconds(5), 1024);

        String message = assertThrows(IOException.class, source::readWatermark).getMessage();
        assertTrue(message.endsWith("wrote a line longer than 1024 bytes to stdout; killed it"), message);
        assertEquals(SIGKILL_EXIT, exitCode(started.get(0)));
    }

    @Test
    void closeTerminatesTheChildWithSigterm() throws Exception {
        ChildProcessWatermarkSource source = source("respond", PATIENT);
        source.readWatermark();

        source.close();

        assertFalse(started.get(0).isAlive(), "close waits for the exit");
        assertEquals(SIGTERM_EXIT, started.get(0).exitValue());
        assertEquals("the backup watermark source is closed",
                assertThrows(IllegalStateException.class, source::readWatermark).getMessage());
        assertEquals(1, started.size());
        source.close(); // idempotent
    }

    @Test
    void closeKillsAChildThatIgnoresSigtermAfterTheGrace() throws Exception {
        ChildProcessWatermarkSource source = source("ignore-term", PATIENT, Duration.ofMillis(300),
                ReaderProcess.MAX_LINE_BYTES);
        source.readWatermark();

        source.close();

        assertFalse(started.get(0).isAlive());
        assertEquals(SIGKILL_EXIT, started.get(0).exitValue());
    }

    @Test
    void closeAbortsAReadInFlight() throws Exception {
        ChildProcessWatermarkSource source = source("hang", PATIENT, Duration.ofMillis(300),
                ReaderProcess.MAX_LINE_BYTES);
        CompletableFuture<Throwable> read = CompletableFuture.supplyAsync(() -> {
            try {
                source.readWatermark();
                return null;
            } catch (Exception e) {
                return e;
            }
        });
        Process child = firstStarted.get(20, TimeUnit.SECONDS);

        source.close();

        Throwable failure = read.get(20, TimeUnit.SECONDS);
        // "exited before ready", "exited", or "cannot send a request", depending on when close came
        assertTrue(failure instanceof IOException, String.valueOf(failure));
        assertFalse(child.isAlive(), "close waits for the exit");
    }

    @Test
    void passesTheReaderEnvironment() {
        ChildProcessWatermarkSource source = source("env", PATIENT);

        assertEquals("url=s3://bucket/db level=DEBUG file=unset ext=/opt/litestream-vfs.so",
                assertThrows(IOException.class, source::readWatermark).getMessage());
    }

    @Test
    void anUnstartableCommandIsAClearError() {
        ReaderLauncher launcher = new ReaderLauncher(ReaderCommand.of(List.of("/nonexistent/reader")),
                new ReaderEnvironment("s3://b/db", "warn", "", "/x.so"));
        ChildProcessWatermarkSource source = new ChildProcessWatermarkSource(launcher, PATIENT, Duration.ofSeconds(1));
        sources.add(source);

        String message = assertThrows(IOException.class, source::readWatermark).getMessage();
        assertTrue(message.startsWith("cannot start the backup watermark reader /nonexistent/reader: "), message);
    }
}
