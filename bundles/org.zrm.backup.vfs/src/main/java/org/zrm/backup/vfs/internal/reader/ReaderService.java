package org.zrm.backup.vfs.internal.reader;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.zrm.backup.vfs.internal.watermark.BoundedLineReader;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;
import org.zrm.backup.vfs.internal.watermark.WireCodec;

/**
 * The reader child's request loop (upstream {@code VfsBackupWatermarkWorkerService} with a
 * parent): sends {@code ready} before anything else, then answers each request, building the
 * source on first use. A source that failed to build is not kept, so the next request tries again;
 * any failure is answered as an error response.
 *
 * <p>Requests run on one worker thread so the loop keeps reading stdin while a VFS read hangs: at
 * end of input (the parent closed the pipe or died) the loop closes the source after the running
 * request, waiting at most {@link #CLOSE_WAIT_MS}, and returns, so the child never outlives its
 * parent by more than that.
 */
final class ReaderService {

    /** Factory of the source; may throw (missing extension, unreachable backup). */
    @FunctionalInterface
    interface SourceFactory {
        WatermarkSource open() throws Exception;
    }

    /** Longest request line accepted; a request is ~60 bytes, longer lines are skipped. */
    static final int MAX_LINE_BYTES = 64 * 1024;
    /**
     * Requests waiting behind a running one. The parent sends one at a time and kills the child on
     * timeout, so more can only come from a broken parent: those are answered with an error.
     */
    static final int MAX_QUEUED_REQUESTS = 16;
    static final long CLOSE_WAIT_MS = 5_000;

    private final WireCodec codec;
    private final PrintStream out;
    private final SourceFactory factory;
    private final PrintStream diagnostics;
    private WatermarkSource source; // only touched by the worker thread

    /**
     * @param codec the protocol
     * @param out the protocol channel (the process's real stdout)
     * @param factory builds the source on the first request
     * @param diagnostics where problems of the loop itself are written (stderr, logged by the parent)
     */
    ReaderService(WireCodec codec, PrintStream out, SourceFactory factory, PrintStream diagnostics) {
        this.codec = codec;
        this.out = out;
        this.factory = factory;
        this.diagnostics = diagnostics;
    }

    /** Sends {@code ready}, serves requests until {@code in} ends, then closes the source. */
    void run(InputStream in) throws InterruptedException {
        ThreadPoolExecutor worker = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(MAX_QUEUED_REQUESTS), r -> {
                    Thread t = new Thread(r, "vfs-reader-worker");
                    t.setDaemon(true); // a read stuck in native code must not keep the process alive
                    return t;
                });
        send(codec.ready());
        BoundedLineReader lines = new BoundedLineReader(in, MAX_LINE_BYTES);
        try {
            String next;
            while ((next = nextLine(lines)) != null) {
                String line = next;
                codec.parse(line).ifPresentOrElse(message -> {
                    if (message instanceof WireCodec.Request request) {
                        submit(worker, request.requestID());
                    } else {
                        diagnostics.println("vfs reader: ignoring unexpected message " + line);
                    }
                }, () -> diagnostics.println("vfs reader: ignoring input that is not a request: " + line));
            }
        } catch (IOException e) {
            diagnostics.println("vfs reader: reading requests failed, stopping: " + e);
        } finally {
            try {
                worker.execute(this::closeSource);
            } catch (RejectedExecutionException e) {
                diagnostics.println("vfs reader: requests still queued at end of input; exiting without closing");
            }
            worker.shutdown();
            if (!worker.awaitTermination(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS)) {
                diagnostics.println("vfs reader: a read is still running after " + CLOSE_WAIT_MS + " ms; exiting anyway");
            }
        }
    }

    private String nextLine(BoundedLineReader lines) throws IOException {
        while (true) {
            try {
                return lines.readLine();
            } catch (BoundedLineReader.LineTooLongException e) {
                diagnostics.println("vfs reader: skipping an input " + e.getMessage());
                lines.skipLine();
            }
        }
    }

    private void submit(ThreadPoolExecutor worker, String requestID) {
        try {
            worker.execute(() -> handle(requestID));
        } catch (RejectedExecutionException e) {
            send(codec.error(requestID, "Error", "backup watermark reader is busy: " + MAX_QUEUED_REQUESTS
                    + " requests already waiting"));
        }
    }

    private void handle(String requestID) {
        try {
            if (source == null) {
                source = factory.open();
            }
            send(codec.result(requestID, source.readWatermark()));
        } catch (Exception | LinkageError e) {
            // LinkageError: e.g. UnsatisfiedLinkError from sqlite-jdbc's native library
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            send(codec.error(requestID, e.getClass().getSimpleName(), message));
        }
    }

    private void closeSource() {
        if (source != null) {
            source.close();
            source = null;
        }
    }

    private void send(String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }
}
