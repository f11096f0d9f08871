package org.zrm.storer.internal.queue;

import org.zrm.changelog.StorerListener;
import org.zrm.storer.internal.DelegatingChangeLog;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ChangeLogEntry;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogTransaction;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;

/**
 * The storer in a child JVM, for the tests that need a small heap or a hard kill:
 * <ul>
 *   <li>{@code million <uri> <app> <shard> <changes>}: stores one transaction of that many changes
 *       through the real change log and prints {@code DONE …}; run with {@code -Xmx256m}.</li>
 *   <li>{@code crash <uri> <app> <shard> <transactions> <batchSize>}: stores small transactions;
 *       the first transaction is committed on its own, and its commit is held until every other
 *       transaction is queued, so the rest form one group; that group's rows are flushed, then the child prints {@code HOLD} and waits before
 *       committing it, to be killed there. Every durable transaction is printed as {@code ACK w}.</li>
 * </ul>
 */
public final class QueueChild {

    static final String TASK = "child-task";

    private QueueChild() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        StorerSettings settings = StorerSettings.of(args[1], args[2], Integer.parseInt(args[3]));
        if (mode.equals("crash")) {
            settings = settings.withChangeLogBatchSize(Integer.parseInt(args[5]));
        }
        try (PgChangeLog log = new PgChangeLog(settings)) {
            log.ensureReplicationConfig(new SubscriptionState("00", List.of(), "00"), false);
            log.assumeOwnership(TASK, "127.0.0.1:1");
            int code = mode.equals("million") ? million(log, Integer.parseInt(args[4])) : crash(log, Integer.parseInt(args[4]));
            System.out.flush();
            System.exit(code);
        }
    }

    private static int million(PgChangeLog log, int changes) throws Exception {
        String w = Msgs.wm(1_000);
        Listener listener = new Listener(w);
        String payload = "p".repeat(100);
        StorerQueue queue = new StorerQueue(log, TASK, StorerQueueSettings.defaults(), listener,
                (snapshot, requests) -> snapshot.close());
        Msgs.M b = Msgs.begin(w);
        queue.enqueue(b.message(), b.json());
        for (int i = 0; i < changes; i++) {
            // Generated one at a time: the producer holds nothing either.
            Msgs.M m = Msgs.insert(i, payload);
            queue.enqueue(m.message(), m.json());
        }
        Msgs.M c = Msgs.commit(w);
        queue.enqueue(c.message(), c.json());
        listener.done.await();
        queue.close();
        if (listener.failure != null) {
            listener.failure.printStackTrace(System.out);
            return 1;
        }
        Runtime rt = Runtime.getRuntime();
        System.out.println("DONE backPressureEvents=" + queue.backPressureEvents() + " limitBytes=" + queue.limitBytes()
                + " maxHeap=" + rt.maxMemory());
        return 0;
    }

    private static int crash(PgChangeLog log, int transactions) throws Exception {
        CountDownLatch allQueued = new CountDownLatch(1);
        HoldingLog holding = new HoldingLog(log, allQueued);
        CountDownLatch firstCommitStarted = holding.firstCommitStarted;
        Listener listener = new Listener(null);
        StorerQueue queue = new StorerQueue(holding, TASK, StorerQueueSettings.defaults(), listener,
                (snapshot, requests) -> snapshot.close());
        for (int t = 1; t <= transactions; t++) {
            String w = Msgs.wm(t);
            Msgs.M b = Msgs.begin(w);
            queue.enqueue(b.message(), b.json());
            for (int i = 0; i < 3; i++) {
                Msgs.M m = Msgs.insert(t * 10L + i, "crash-" + t + "-" + i);
                queue.enqueue(m.message(), m.json());
            }
            Msgs.M c = Msgs.commit(w);
            queue.enqueue(c.message(), c.json());
            if (t == 1) {
                firstCommitStarted.await(); // so that the first group holds only the first transaction
            }
        }
        allQueued.countDown();
        listener.done.await(); // never: the parent kills this JVM while the second group is held
        return 2;
    }

    /** Prints acks; completes on the given watermark or a failure. */
    static final class Listener implements StorerListener {
        final String last;
        final CountDownLatch done = new CountDownLatch(1);
        volatile ChangeLogException failure;

        Listener(String last) {
            this.last = last;
        }

        @Override
        public void stored(String commitWatermark, ChangeSourceUpstream ack) {
            System.out.println("ACK " + commitWatermark);
            System.out.flush();
            if (commitWatermark.equals(last)) {
                done.countDown();
            }
        }

        @Override
        public void statusAcked(ChangeSourceUpstream echo) {
        }

        @Override
        public void failed(ChangeLogException cause) {
            failure = cause;
            System.out.println("FAILED " + cause);
            done.countDown();
        }
    }

    /**
     * Delegates to the real change log; holds the first commit until everything is queued, and
     * holds the second commit forever after its rows have been flushed.
     */
    static final class HoldingLog extends DelegatingChangeLog {
        private final CountDownLatch allQueued;
        final CountDownLatch firstCommitStarted = new CountDownLatch(1);
        private final AtomicInteger commits = new AtomicInteger();

        HoldingLog(ChangeLog delegate, CountDownLatch allQueued) {
            super(delegate);
            this.allQueued = allQueued;
        }

        @Override
        public ChangeLogTransaction beginTransaction(String taskID) throws ChangeLogException {
            ChangeLogTransaction tx = delegate().beginTransaction(taskID);
            return new ChangeLogTransaction() {
                int rows;

                @Override
                public void append(ChangeLogEntry entry) throws ChangeLogException {
                    tx.append(entry);
                    rows++;
                }

                @Override
                public void commit() throws ChangeLogException {
                    try {
                        if (commits.getAndIncrement() == 0) {
                            firstCommitStarted.countDown();
                            allQueued.await();
                        } else {
                            System.out.println("HOLD rows=" + rows);
                            System.out.flush();
                            new CountDownLatch(1).await(); // killed here
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new ChangeLogException("interrupted", e);
                    }
                    tx.commit();
                }

                @Override
                public void close() {
                    tx.close();
                }
            };
        }
    }
}
