package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changestreamer.internal.Msgs.tx;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.backup.ReplicaRestorer;
import org.zrm.changelog.Storer;
import org.zrm.changelog.StorerFactory;
import org.zrm.storer.internal.PgChangeLog;
import org.zrm.storer.internal.StorerSettings;
import org.zrm.storer.internal.queue.StorerQueue;
import org.zrm.storer.internal.queue.StorerQueueSettings;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * The restore step at start-up: with entries in the change log, the restorer runs before the
 * change source is initialized, with the log's replicaVersion and oldest watermark, while the
 * purge lock holds them; with an empty log it does not run (upstream restores only then).
 */
@PostgresTest
class RestoreStepPgTest {

    private static final AtomicInteger SHARDS = new AtomicInteger(800);
    static final StreamerSettings SETTINGS = StreamerSettings.defaults("task-a", "node-a:4849")
            .withStartupDelay(Duration.ZERO).withSubscriberMaxBufferedBytes(1 << 20);

    private PgDatabase db;
    private int shard;
    private PgChangeLog log;
    private ChangeStreamerService streamer;
    private FakeChangeSource source;
    /** What the restorer saw, and whether the source had been initialized by then. */
    private final BlockingQueue<String> calls = new LinkedBlockingQueue<>();

    @BeforeEach
    void setUp(PgDatabase db) {
        this.db = db;
        this.shard = SHARDS.incrementAndGet();
        this.log = new PgChangeLog(StorerSettings.of(db.uri(), "zoro", shard));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (streamer != null) {
            streamer.stop(Duration.ofSeconds(10));
        }
        log.close();
    }

    private void start(RestorerSlot slot) {
        source = new FakeChangeSource("01");
        StorerFactory factory = new StorerFactory() {
            @Override
            public Storer start(String taskID, org.zrm.changelog.StorerListener l, org.zrm.changelog.CatchupHandler h) {
                return new StorerQueue(log, taskID, StorerQueueSettings.defaults(), l, h);
            }

            @Override
            public PgChangeLog changeLog() {
                return log;
            }
        };
        streamer = new ChangeStreamerService(SETTINGS, factory, source, new ManualTimer());
        streamer.restoreStep(slot);
        streamer.start();
    }

    private ReplicaRestorer recording() {
        return (replicaVersion, minWatermark) -> {
            calls.add(replicaVersion + "," + minWatermark + ",initialized=" + !source.initializations.isEmpty());
            return true;
        };
    }

    @Test
    void restoresBeforeTheSourceIsInitializedWhenTheLogHasEntries() throws Exception {
        start(new RestorerSlot(true, Duration.ofSeconds(5)));
        source.stream();
        source.push(tx("03", "a"));
        assertEquals("03", source.acks.poll(10, TimeUnit.SECONDS).watermark());
        streamer.stop(Duration.ofSeconds(10));
        // The replacement node: its restorer registers a little after the streamer starts (the
        // litestream bundle starts later), and the start waits for it.
        RestorerSlot slot = new RestorerSlot(true, Duration.ofSeconds(30));
        start(slot);
        Thread.sleep(200); // the registration arrives later than the start
        slot.set(recording());
        assertEquals("01,01,initialized=false", calls.poll(10, TimeUnit.SECONDS));
        assertEquals(Boolean.FALSE, source.initializations.poll(10, TimeUnit.SECONDS), "initialized after the restore");
    }

    @Test
    void noRestoreFromAnEmptyLog() throws Exception {
        RestorerSlot slot = new RestorerSlot(true, Duration.ofSeconds(30));
        slot.set(recording());
        start(slot);
        source.stream();
        assertNull(calls.poll(200, TimeUnit.MILLISECONDS));
    }

    @Test
    void noBackupURLNoRestoreAndAMissingRestorerOnlyDelaysTheStart() throws Exception {
        RestorerSlot none = new RestorerSlot(false, Duration.ofSeconds(30));
        none.set(recording());
        none.restore("01", "01");
        assertTrue(calls.isEmpty());
        long t0 = System.nanoTime();
        new RestorerSlot(true, Duration.ofMillis(300)).restore("01", "01");
        assertTrue(System.nanoTime() - t0 >= Duration.ofMillis(300).toNanos());
        assertFalse(List.copyOf(calls).iterator().hasNext());
        // A stop ends the wait at once.
        RestorerSlot waiting = new RestorerSlot(true, Duration.ofHours(1));
        Thread t = new Thread(() -> {
            try {
                waiting.restore("01", "01");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        Thread.sleep(100);
        waiting.cancel();
        t.join(5_000);
        assertFalse(t.isAlive(), "cancel ended the wait");
        waiting.set(recording());
        assertTrue(calls.isEmpty(), "no restore after a cancel");
    }
}
