package org.zrm.backup.vfs.internal.process;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;
import org.zrm.backup.vfs.internal.watermark.WireCodec;

/**
 * Reads the backed-up watermark from a reader child process (upstream
 * {@code VfsBackupWatermarkWorkerSource} plus {@code requestVfsBackupWatermark}), so the native
 * extension, its process-wide environment and any hang stay out of the runtime's JVM.
 *
 * <ul>
 *   <li>The child is started on the first read and waited for until it sends {@code ready}, for at
 *       most the probe timeout. Upstream waits forever (spec §3.3 BUG); here a child that exits
 *       first fails the read with its exit code, and one that stays silent is killed; either way
 *       the next read starts a new child.</li>
 *   <li>Each read then waits at most the probe timeout for the response. On timeout the child is
 *       killed with SIGKILL and forgotten, so the next read starts a new one. An error response
 *       fails the read but keeps the child. A child that has exited is replaced on the next read.</li>
 *   <li>{@link #close()} sends SIGTERM, waits at most the close grace, then SIGKILLs; it also
 *       aborts a read in flight. A closed source refuses further reads: a monitor activation
 *       creates its own source.</li>
 * </ul>
 * Reads come from one thread at a time (the monitor's check thread); {@link #close()} may come
 * from any thread.
 */
public final class ChildProcessWatermarkSource implements WatermarkSource {

    private static final Logger LOG = LoggerFactory.getLogger(ChildProcessWatermarkSource.class);

    private final ReaderLauncher launcher;
    private final Duration timeout;
    private final Duration closeGrace;
    private final Object lock = new Object();
    private ReaderProcess child; // guarded by lock
    private boolean closed; // guarded by lock
    private long lastRequestID; // guarded by lock

    /**
     * @param launcher starts children
     * @param timeout {@code litestream.vfsProbeTimeoutMs}: bounds the ready handshake and each read
     * @param closeGrace how long {@link #close()} waits after SIGTERM before SIGKILL
     */
    public ChildProcessWatermarkSource(ReaderLauncher launcher, Duration timeout, Duration closeGrace) {
        this.launcher = launcher;
        this.timeout = timeout;
        this.closeGrace = closeGrace;
    }

    @Override
    public BackupWatermark readWatermark() throws IOException, InterruptedException {
        ReaderProcess reader = readyChild();
        String requestID;
        synchronized (lock) {
            requestID = Long.toString(++lastRequestID);
        }
        WireCodec.Response response;
        try {
            response = reader.request(requestID).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            forget(reader);
            reader.kill(); // it cannot take requests any more
            throw e;
        } catch (TimeoutException e) {
            LOG.warn("vfs backup monitor: reader pid={} did not answer request {} within {} ms; killing it (SIGKILL)",
                    reader.pid(), requestID, timeout.toMillis());
            forget(reader);
            reader.kill();
            throw new WatermarkTimeoutException(timeout.toMillis());
        } catch (ExecutionException e) {
            forget(reader); // only fails when the child has ended
            throw asIOException(e);
        }
        if (response.errorMessage() != null) {
            throw new IOException(response.errorMessage());
        }
        if (response.result() == null) {
            throw new IOException("backup watermark response missing result");
        }
        return launcher.codec().watermark(response.result());
    }

    /** Returns a child that has sent {@code ready}, starting one if there is none (or it ended). */
    private ReaderProcess readyChild() throws IOException, InterruptedException {
        ReaderProcess reader;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the backup watermark source is closed");
            }
            if (child != null && !child.isAlive()) {
                child = null;
            }
            if (child == null) {
                child = launcher.start();
                LOG.info("vfs backup monitor: started backup watermark reader pid={}", child.pid());
            }
            reader = child;
        }
        try {
            reader.ready().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return reader;
        } catch (TimeoutException e) {
            forget(reader);
            reader.kill();
            throw new IOException("backup watermark reader (pid " + reader.pid() + ") did not send ready within "
                    + timeout.toMillis() + " ms; killed it");
        } catch (ExecutionException e) {
            forget(reader);
            throw asIOException(e);
        }
    }

    private void forget(ReaderProcess reader) {
        synchronized (lock) {
            if (child == reader) {
                child = null;
            }
        }
    }

    private static IOException asIOException(ExecutionException e) {
        Throwable cause = e.getCause();
        return cause instanceof IOException io ? new IOException(io.getMessage(), io)
                : new IOException(String.valueOf(cause), cause);
    }

    @Override
    public void close() {
        ReaderProcess reader;
        synchronized (lock) {
            closed = true;
            reader = child;
            child = null;
        }
        if (reader == null) {
            return;
        }
        try {
            reader.terminate(closeGrace);
            LOG.info("vfs backup monitor: stopped backup watermark reader pid={}", reader.pid());
        } catch (InterruptedException e) {
            reader.kill();
            Thread.currentThread().interrupt();
        }
    }
}
