package org.zrm.launcher;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Owns what one launch started: the runtime child process and, if any, the embedded PostgreSQL.
 * {@link #close()} stops them in that order (the runtime first, so that it never sees its
 * database vanish) and is safe to call from the main thread and a shutdown hook at once.
 */
public final class RuntimeSupervisor implements AutoCloseable {
    private final Duration gracePeriod;
    private final PrintStream out;
    private AutoCloseable postgres;   // guarded by this
    private Process child;            // guarded by this
    private boolean closed;           // guarded by this
    private Consumer<Boolean> onExit; // guarded by this

    /**
     * @param gracePeriod how long the runtime may take to stop after SIGTERM before it is killed
     * @param out where progress is reported
     */
    public RuntimeSupervisor(Duration gracePeriod, PrintStream out) {
        this.gracePeriod = gracePeriod;
        this.out = out;
    }

    /**
     * Hands over the embedded PostgreSQL, to be stopped last.
     *
     * @throws LaunchException (after stopping it) if the supervisor is already closing
     */
    public synchronized void adoptPostgres(AutoCloseable postgres) {
        if (closed) {
            closeQuietlyInto(postgres, new LaunchException("shutting down; the embedded PostgreSQL was stopped"));
        }
        this.postgres = postgres;
    }

    /**
     * Hands over the runtime child process.
     *
     * @throws LaunchException (after killing it) if the supervisor is already closing
     */
    public synchronized void adoptChild(Process child) {
        if (closed) {
            child.destroyForcibly();
            throw new LaunchException("shutting down; the runtime was not started");
        }
        this.child = child;
    }

    /**
     * Registers what to do once the runtime has exited, before PostgreSQL is stopped: called once,
     * from {@link #close()}, with {@code true} unless the launcher had to kill the runtime after
     * the grace period, or it died of SIGKILL (another's, such as the OOM killer's) or SIGABRT:
     * such a JVM may leave files it was writing half-written.
     */
    public synchronized void onChildExit(Consumer<Boolean> action) {
        this.onExit = action;
    }

    /**
     * Waits for the runtime to exit on its own.
     *
     * @return its exit code
     */
    public int awaitChild() throws InterruptedException {
        Process p;
        synchronized (this) {
            p = child;
        }
        return p.waitFor();
    }

    /**
     * Stops the runtime (SIGTERM, then SIGKILL after the grace period) and then the embedded
     * PostgreSQL. Idempotent; a concurrent caller waits until the first one has finished, so a
     * shutdown hook never lets the JVM exit while PostgreSQL is still being stopped.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            boolean killed = stopChild();
            if (child != null && onExit != null && !child.isAlive()) {
                // Killed after the grace period is never clean, whatever the exit status says: a
                // child that was writing to its closed pipes may die of SIGPIPE first (141).
                onExit.accept(!killed && !diedOfSignal(child.exitValue()));
            }
        } finally {
            if (postgres != null) {
                out.println("zrm: stopping the embedded PostgreSQL");
                try {
                    postgres.close();
                } catch (Exception e) {
                    throw new LaunchException("cannot stop the embedded PostgreSQL: " + e.getMessage(), e);
                }
            }
        }
    }

    /** @return whether the runtime had to be killed because it outlived the grace period */
    private boolean stopChild() {
        if (child == null || !child.isAlive()) {
            return false;
        }
        out.println("zrm: stopping the runtime (pid " + child.pid() + ")");
        child.destroy();
        try {
            if (!child.waitFor(gracePeriod.toMillis(), TimeUnit.MILLISECONDS)) {
                out.println("zrm: the runtime did not stop within " + gracePeriod.toSeconds() + " s; killing it");
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    out.println("zrm: the runtime (pid " + child.pid() + ") is still alive after SIGKILL");
                }
                return true;
            }
            return false;
        } catch (InterruptedException e) {
            child.destroyForcibly();
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /**
     * Whether the exit status is that of a JVM ended by SIGKILL (the OOM killer, an operator) or
     * by SIGABRT (a crash), which may have cut a file it was writing short. SIGTERM (143) is not:
     * the JVM shuts down in order.
     */
    static boolean diedOfSignal(int exitValue) {
        return exitValue == 128 + 9 || exitValue == 128 + 6;
    }

    private static void closeQuietlyInto(AutoCloseable resource, LaunchException failure) {
        try {
            resource.close();
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
        throw failure;
    }
}
