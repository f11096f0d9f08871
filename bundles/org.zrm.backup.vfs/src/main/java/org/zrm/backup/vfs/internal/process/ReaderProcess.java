package org.zrm.backup.vfs.internal.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.vfs.internal.watermark.BoundedLineReader;
import org.zrm.backup.vfs.internal.watermark.WireCodec;

/**
 * One running reader child: its stdin for requests, a daemon thread reading its stdout (protocol
 * lines) and one logging its stderr. At most one request is outstanding; a response for any other
 * request id (a late answer to a request that timed out) is ignored.
 *
 * <p>Stdout lines are bounded by {@link #MAX_LINE_BYTES}: a protocol message is a few hundred
 * bytes, so a longer line means the child is broken; it is killed and the waiting read fails.
 * Lines that are not protocol messages (the extension's own log output, which goes to stdout when
 * {@code LITESTREAM_LOG_FILE} is unset) are logged, shortened to {@link #MAX_LOGGED_CHARS}.
 */
final class ReaderProcess {

    private static final Logger LOG = LoggerFactory.getLogger(ReaderProcess.class);
    static final int MAX_LINE_BYTES = 1 << 20;
    static final int MAX_LOGGED_CHARS = 1024;
    /** How long the exit status may take to appear once stdout has ended. */
    private static final long EXIT_WAIT_MS = 2_000;

    private record Pending(String requestID, CompletableFuture<WireCodec.Response> response) {
    }

    private final Process process;
    private final WireCodec codec;
    private final int maxLineBytes;
    private final OutputStream stdin;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private final AtomicReference<Pending> pending = new AtomicReference<>();
    private volatile IOException ended;

    private ReaderProcess(Process process, WireCodec codec, int maxLineBytes) {
        this.process = process;
        this.codec = codec;
        this.maxLineBytes = maxLineBytes;
        this.stdin = process.getOutputStream();
    }

    /** Starts the threads that read {@code process}'s output. */
    static ReaderProcess attach(Process process, WireCodec codec, int maxLineBytes) {
        ReaderProcess child = new ReaderProcess(process, codec, maxLineBytes);
        daemon(child::readStdout, "zrm-vfs-reader-" + process.pid() + "-out").start();
        daemon(new StderrLogger(process.getErrorStream(), process.pid()), "zrm-vfs-reader-" + process.pid() + "-err")
                .start();
        return child;
    }

    long pid() {
        return process.pid();
    }

    /** @return completes when the child has sent {@code ready}; fails if it ends first */
    CompletableFuture<Void> ready() {
        return ready;
    }

    /** @return whether the child is still running and its stdout still open */
    boolean isAlive() {
        return ended == null && process.isAlive();
    }

    /**
     * Sends a request.
     *
     * @return completes with the matching response; fails when the child ends first
     * @throws IOException if the child has ended or the request cannot be written
     */
    CompletableFuture<WireCodec.Response> request(String requestID) throws IOException {
        Pending p = new Pending(requestID, new CompletableFuture<>());
        pending.set(p); // replaces a request that timed out
        IOException end = ended;
        if (end != null) {
            pending.compareAndSet(p, null);
            throw end;
        }
        try {
            synchronized (stdin) {
                stdin.write((codec.request(requestID) + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
        } catch (IOException e) {
            pending.compareAndSet(p, null);
            throw new IOException("cannot send a request to the backup watermark reader (pid " + pid() + "): " + e, e);
        }
        return p.response();
    }

    /** SIGKILL, for a child that hangs. */
    void kill() {
        process.destroyForcibly();
        closeStdin();
    }

    /** SIGTERM, then SIGKILL if it has not exited after {@code grace}; waits for the exit. */
    void terminate(Duration grace) throws InterruptedException {
        process.destroy();
        closeStdin();
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.warn("vfs backup monitor: reader pid={} did not exit within {} ms of SIGTERM; killing it", pid(),
                    grace.toMillis());
            process.destroyForcibly();
            process.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    private void readStdout() {
        IOException broken = null;
        try (InputStream out = process.getInputStream()) {
            BoundedLineReader lines = new BoundedLineReader(out, maxLineBytes);
            String line;
            while ((line = lines.readLine()) != null) {
                dispatch(line);
            }
        } catch (BoundedLineReader.LineTooLongException e) {
            process.destroyForcibly();
            broken = new IOException("backup watermark reader (pid " + pid() + ") wrote a line longer than "
                    + maxLineBytes + " bytes to stdout; killed it");
        } catch (IOException e) {
            // the pipe broke because the child was killed: report how it exited
            LOG.debug("vfs reader pid={}: stdout failed: {}", pid(), e.toString());
        }
        try {
            finish(broken != null ? broken : exited());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            finish(new IOException("interrupted while waiting for the backup watermark reader to exit"));
        }
    }

    private void dispatch(String line) {
        var message = codec.parse(line);
        if (message.isEmpty()) {
            LOG.info("vfs reader pid={} output: {}", pid(),
                    line.length() > MAX_LOGGED_CHARS ? line.substring(0, MAX_LOGGED_CHARS) + "…" : line);
        } else if (message.get() instanceof WireCodec.Ready) {
            ready.complete(null);
        } else if (message.get() instanceof WireCodec.Response response) {
            Pending p = pending.get();
            if (p != null && p.requestID().equals(response.requestID()) && pending.compareAndSet(p, null)) {
                p.response().complete(response);
            } else {
                LOG.debug("vfs reader pid={}: ignoring response to request {} (waiting for {})", pid(),
                        response.requestID(), p == null ? "none" : p.requestID());
            }
        } else {
            LOG.debug("vfs reader pid={}: ignoring unexpected message {}", pid(), line);
        }
    }

    private IOException exited() throws InterruptedException {
        closeStdin();
        if (!process.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS)) {
            // stdout closed but still running: useless as a reader
            process.destroyForcibly();
            process.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS);
        }
        String code = process.isAlive() ? "unknown" : Integer.toString(process.exitValue());
        return new IOException(ready.isDone()
                ? "backup watermark reader exited (code=" + code + ")"
                : "backup watermark reader exited before ready (code=" + code + ")");
    }

    private void finish(IOException end) {
        closeStdin();
        ended = end;
        ready.completeExceptionally(end); // no-op once ready
        Pending p = pending.getAndSet(null);
        if (p != null) {
            p.response().completeExceptionally(end);
        }
        LOG.debug("vfs reader pid={}: {}", pid(), end.getMessage());
    }

    private void closeStdin() {
        try {
            stdin.close();
        } catch (IOException e) {
            LOG.debug("vfs reader pid={}: closing stdin: {}", pid(), e.toString());
        }
    }

    private static Thread daemon(Runnable task, String name) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        return t;
    }
}
