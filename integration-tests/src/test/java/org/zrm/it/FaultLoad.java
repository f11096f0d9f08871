package org.zrm.it;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The fault suite's upstream write load: one writer thread committing numbered transactions
 * without pause. Transaction {@code n} is single-row ({@code fault_a} row {@code n}) unless
 * {@code n % 3 == 0}; then it is multi-row: three {@code fault_b} rows {@code 10n..10n+2} and an
 * update of {@code fault_a} row {@code n-1}. Every row it writes carries {@code seq = n}, so each
 * change in the change log or on a subscription names its upstream transaction.
 *
 * <p>One writer on one connection: its commit order is the order of {@code n}. A commit that
 * fails (the server went away) may still have committed; {@code n} is never reused, and what
 * really committed is read back from upstream at the end ({@link FaultInvariant}).
 */
final class FaultLoad implements AutoCloseable {

    static final String SCHEMA = "CREATE TABLE fault_a (id int8 PRIMARY KEY, seq int8 NOT NULL, v text NOT NULL);"
            + "CREATE TABLE fault_b (id int8 PRIMARY KEY, seq int8 NOT NULL, v text NOT NULL);"
            + "CREATE PUBLICATION fault_pub FOR TABLE fault_a, fault_b";

    /** How long the writer keeps retrying a lost upstream before it gives up and fails the test. */
    private static final long GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(90);

    private final FaultInvariant.Db db;
    private final Thread thread;
    private final AtomicLong acked = new AtomicLong();      // highest n whose commit returned
    private final AtomicLong attempted = new AtomicLong();  // highest n begun
    private final AtomicLong failedCommits = new AtomicLong();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private volatile boolean running = true;

    FaultLoad(FaultInvariant.Db db) {
        this.db = db;
        this.thread = new Thread(this::run, "fault-load");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        long failingSince = 0;
        while (running) {
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                failingSince = 0;
                while (running) {
                    long n = attempted.incrementAndGet();
                    if (n % 3 == 0) {
                        s.execute("INSERT INTO fault_b VALUES (" + (10 * n) + ", " + n + ", 'b" + n + "'), ("
                                + (10 * n + 1) + ", " + n + ", 'b" + n + "'), (" + (10 * n + 2) + ", " + n + ", 'b" + n + "')");
                        s.execute("UPDATE fault_a SET seq = " + n + ", v = 'u" + n + "' WHERE id = " + (n - 1));
                    } else {
                        s.execute("INSERT INTO fault_a VALUES (" + n + ", " + n + ", 'a" + n + "')");
                    }
                    c.commit();
                    acked.set(n);
                    // Pace the load: a few hundred transactions a second would only slow the
                    // shared 2-core machine; the point is a steady stream across the fault.
                    TimeUnit.MILLISECONDS.sleep(4);
                }
            } catch (SQLException e) {
                failedCommits.incrementAndGet();
                long now = System.nanoTime();
                if (failingSince == 0) {
                    failingSince = now;
                } else if (now - failingSince > GIVE_UP_NANOS) {
                    error.set(new AssertionError("upstream unreachable for the writer for 90 s", e));
                    return;
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(100); // upstream is down: retry at a modest pace
                } catch (InterruptedException ie) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } catch (Throwable t) {
                error.set(t);
                return;
            }
        }
    }

    /** @return the highest transaction number begun so far */
    long attempted() {
        return attempted.get();
    }

    /** @return the highest transaction number whose commit returned successfully */
    long acked() {
        return acked.get();
    }

    long failedAttempts() {
        return failedCommits.get();
    }

    /** Waits until {@code more} further transactions have committed after now; bounded. */
    void awaitProgress(long more) throws InterruptedException {
        long target = acked.get() + more;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (acked.get() < target) {
            if (error.get() != null) {
                throw new AssertionError("the writer failed", error.get());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the writer is stuck at " + acked.get() + ", expected " + target);
            }
            TimeUnit.MILLISECONDS.sleep(20); // the writer thread counts; there is nothing to wait on
        }
    }

    /** Stops the writer and waits for it. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        if (thread.isAlive()) {
            thread.interrupt();
            throw new AssertionError("the writer did not stop within 30 s");
        }
        if (error.get() != null) {
            throw new AssertionError("the writer failed", error.get());
        }
    }
}
