package org.zrm.it;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A protocol-v6 subscriber that records, for every transaction it receives whole, its commit
 * watermark and the load's transaction number ({@link FaultLoad}). When the connection ends it
 * reconnects from the last commit it received, as a replicator does, and drops the partial
 * transaction it was in. So whatever it sees twice or misses is the server's doing.
 */
final class FaultSubscriber implements AutoCloseable {

    /** One received transaction: its commit watermark and load number (-1: none of the load's rows). */
    record Seen(String watermark, long seq) {}

    private final HttpClient http = HttpClient.newHttpClient();
    private final String name;
    private final int port;
    private final String replicaVersion;
    private final String startWatermark;
    private final long startSeq;
    private final List<Seen> seen = new ArrayList<>();  // guarded by this
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int reconnects;
    private volatile ChangesClient client;

    /**
     * @param startWatermark the watermark of the first subscription; everything committed after
     *     it must arrive exactly once
     * @param startSeq the load's last transaction at or before {@code startWatermark} (0: none)
     */
    FaultSubscriber(String name, int port, String replicaVersion, String startWatermark, long startSeq) {
        this.name = name;
        this.port = port;
        this.replicaVersion = replicaVersion;
        this.startWatermark = startWatermark;
        this.startSeq = startSeq;
        this.thread = new Thread(this::run, "fault-subscriber-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    String name() {
        return name;
    }

    String startWatermark() {
        return startWatermark;
    }

    long startSeq() {
        return startSeq;
    }

    int reconnects() {
        return reconnects;
    }

    synchronized List<Seen> seen() {
        return List.copyOf(seen);
    }

    synchronized String lastWatermark() {
        return seen.isEmpty() ? startWatermark : seen.get(seen.size() - 1).watermark();
    }

    private void run() {
        boolean first = true;
        long downSince = 0;
        while (running) {
            ChangesClient c;
            try {
                c = ChangesClient.connect(http, ChangesClient.changesUri(Integer.toString(port), 6,
                        ChangesClient.query(name, replicaVersion, lastWatermark())));
            } catch (Exception e) {
                // The runtime is restarting: retry, within the suite's bound.
                long now = System.nanoTime();
                downSince = downSince == 0 ? now : downSince;
                if (now - downSince > TimeUnit.SECONDS.toNanos(120)) {
                    error.set(new AssertionError(name + " could not reconnect for 120 s", e));
                    return;
                }
                sleepQuietly(200);
                continue;
            }
            downSince = 0;
            if (!first) {
                reconnects++;
            }
            first = false;
            client = c;
            try {
                read(c);
            } catch (InterruptedException e) {
                return;
            } catch (Throwable t) {
                error.set(t);
                return;
            } finally {
                c.abort();
            }
        }
    }

    private void read(ChangesClient c) throws InterruptedException {
        String begin = null;
        long seq = -1;
        while (running) {
            ChangesClient.Frame f = c.poll(Duration.ofMillis(200));
            if (f == null) {
                if (c.isClosed()) {
                    return; // reconnect; a partial transaction is dropped with the connection
                }
                continue;
            }
            switch (f.type()) {
                case "begin" -> {
                    if (begin != null) {
                        throw new AssertionError(name + ": begin inside a transaction: " + f.raw());
                    }
                    begin = f.msg().path(2).path("commitWatermark").asText();
                    seq = -1;
                }
                case "data" -> {
                    if (begin == null) {
                        throw new AssertionError(name + ": data outside a transaction: " + f.raw());
                    }
                    long s = FaultInvariant.seqOf(f.msg().get(1));
                    if (s >= 0) {
                        if (seq >= 0 && seq != s) {
                            throw new AssertionError(name + ": changes of transactions " + seq + " and " + s
                                    + " in one transaction " + begin);
                        }
                        seq = s;
                    }
                }
                case "commit" -> {
                    if (begin == null) {
                        throw new AssertionError(name + ": commit without begin: " + f.raw());
                    }
                    String w = f.msg().path(2).path("watermark").asText();
                    if (!w.equals(begin)) {
                        throw new AssertionError(name + ": commit " + w + " after begin " + begin);
                    }
                    synchronized (this) {
                        seen.add(new Seen(w, seq));
                    }
                    begin = null;
                }
                case "rollback" -> begin = null;
                case "status" -> { }
                default -> {
                    // other control messages (e.g. reset-required) end the subscription
                    JsonNode msg = f.msg();
                    throw new AssertionError(name + ": unexpected message " + msg);
                }
            }
        }
    }

    /** Waits until this subscriber has received the transaction committed at {@code watermark}. */
    void awaitWatermark(String watermark, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (lastWatermark().compareTo(watermark) < 0) {
            if (error.get() != null) {
                throw new AssertionError(name + " failed", error.get());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " is at " + lastWatermark() + " after " + bound + ", expected "
                        + watermark + " (reconnects: " + reconnects + ")");
            }
            TimeUnit.MILLISECONDS.sleep(50); // the reader thread records; nothing to wait on
        }
    }

    Throwable error() {
        return error.get();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        ChangesClient c = client;
        if (c != null) {
            c.abort();
        }
        thread.join(TimeUnit.SECONDS.toMillis(10));
    }

    private static void sleepQuietly(long ms) {
        try {
            TimeUnit.MILLISECONDS.sleep(ms); // the runtime's port offers nothing to wait on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
