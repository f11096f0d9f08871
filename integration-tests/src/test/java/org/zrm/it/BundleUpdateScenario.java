package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.inject.Inject;

import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changestreamer.ChangeStreamer;

/**
 * Live bundle updates under write load: pipeline bundles are replaced one after the other
 * (Bundle.update) while a writer commits rows upstream, each once the pipeline streams again.
 * Afterwards the replica file holds exactly upstream's rows and the change log holds every
 * transaction once, complete: nothing was lost or stored twice across the restarts.
 */
public abstract class BundleUpdateScenario {

    private static final String TABLE = "it_writes";

    @Inject
    protected BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-update-"),
                "CREATE TABLE " + TABLE + " (id int8 PRIMARY KEY, payload text NOT NULL)");
    }

    /**
     * Runs the scenario, updating the bundles {@code symbolicNames} in this order.
     */
    protected void updateUnderWrites(String... symbolicNames) throws Exception {
        Pipeline pipeline = new Pipeline(context);
        pipeline.awaitStreaming();

        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong written = new AtomicLong();
        AtomicReference<Throwable> writerError = new AtomicReference<>();
        CountDownLatch firstRows = new CountDownLatch(20);
        Thread writer = new Thread(() -> {
            try (Connection c = pipeline.upstream(); Statement s = c.createStatement()) {
                while (writing.get()) {
                    long id = written.get() + 1;
                    // One autocommit transaction per row; every 7th row is updated in its own
                    // transaction too, so the stream mixes inserts and updates.
                    s.execute("INSERT INTO " + TABLE + " VALUES (" + id + ", 'row " + id + "')");
                    if (id % 7 == 0) {
                        s.execute("UPDATE " + TABLE + " SET payload = 'updated " + id + "' WHERE id = " + id);
                    }
                    written.set(id);
                    firstRows.countDown();
                    // Pace the writer so that every restart happens while it runs, without flooding
                    // the 2-core machine; a sleep is the point here, not a wait for a signal.
                    TimeUnit.MILLISECONDS.sleep(5);
                }
            } catch (Throwable t) {
                writerError.set(t);
            }
        }, "zrm-it-writer");
        writer.start();
        try {
            assertTrue("writer made no progress", firstRows.await(30, TimeUnit.SECONDS));
            for (String bsn : symbolicNames) {
                update(pipeline, bsn);
                long after = written.get();
                awaitWritten(written, after + 20);
            }
        } finally {
            writing.set(false);
            writer.join(TimeUnit.SECONDS.toMillis(30));
        }
        if (writerError.get() != null) {
            throw new AssertionError("upstream writer failed", writerError.get());
        }
        long rows = written.get();
        assertTrue("rows written across the updates: " + rows, rows >= 20 + 20L * symbolicNames.length);

        List<List<String>> upstreamRows;
        try (Connection c = pipeline.upstream()) {
            upstreamRows = Pipeline.rows(c, "SELECT id, payload FROM " + TABLE + " ORDER BY id");
        }
        assertEquals(rows, upstreamRows.size());
        String lastInsert = pipeline.awaitStoredInsert(TABLE, rows);
        pipeline.awaitReplicaAt(lastInsert);
        awaitReplicaRows(pipeline, upstreamRows);

        assertChangeLogComplete(pipeline, rows);
        assertEquals("streaming", pipeline.status().path("sections").path("changestreamer").path("state").asText());
    }

    /**
     * Updates one bundle and waits until its service is back and the pipeline streams again, so
     * that the next update interrupts a live stream rather than a start-up.
     */
    private void update(Pipeline pipeline, String bsn) throws Exception {
        switch (bsn) {
            case "org.zrm.storer" -> {
                long streamerBefore = changeStreamerServiceId();
                updateAndAwaitService(bundle(bsn), StorerFactory.class);
                awaitChangeStreamer();
                // The streamer depends on the storer statically: it really went away and came back.
                assertTrue("the change streamer was not restarted by the storer update",
                        changeStreamerServiceId() != streamerBefore);
            }
            case "org.zrm.changesource.pg" -> updateAndAwaitService(bundle(bsn), ChangeSource.class);
            default -> throw new IllegalArgumentException("no scenario step for " + bsn);
        }
        try {
            pipeline.awaitStreaming();
        } catch (AssertionError e) {
            throw new AssertionError("after the update of " + bsn + ": " + e.getMessage());
        }
    }

    /**
     * The change log has, per watermark, positions 0..n-1 with exactly one begin (at 0) and one
     * commit (at n-1), and holds every written row's insert exactly once.
     */
    private void assertChangeLogComplete(Pipeline pipeline, long rows) throws SQLException {
        List<List<String>> log;
        try (Connection c = pipeline.upstream()) {
            log = Pipeline.rows(c, "SELECT watermark, pos, change->>'tag', change->'relation'->>'name',"
                    + " change->'new'->>'id' FROM " + Pipeline.CDC + ".\"changeLog\" ORDER BY watermark, pos");
        }
        Map<String, List<List<String>>> byWatermark = new HashMap<>();
        List<String> order = new ArrayList<>();
        for (List<String> row : log) {
            byWatermark.computeIfAbsent(row.get(0), w -> {
                order.add(w);
                return new ArrayList<>();
            }).add(row);
        }
        Map<Long, Integer> inserts = new HashMap<>();
        for (String w : order) {
            List<List<String>> tx = byWatermark.get(w);
            for (int i = 0; i < tx.size(); i++) {
                List<String> row = tx.get(i);
                assertEquals("gap in positions of " + w + ": " + tx, Long.toString(i), row.get(1));
                String tag = row.get(2);
                if (i == 0) {
                    assertEquals("first change of " + w + ": " + tx, "begin", tag);
                } else if (i == tx.size() - 1) {
                    assertEquals("last change of " + w + ": " + tx, "commit", tag);
                } else {
                    assertTrue("begin/commit inside " + w + ": " + tx, !tag.equals("begin") && !tag.equals("commit"));
                }
                if ("insert".equals(tag) && TABLE.equals(row.get(3))) {
                    inserts.merge(Long.parseLong(row.get(4)), 1, Integer::sum);
                }
            }
            assertTrue("transaction " + w + " has no commit: " + tx, tx.size() >= 2);
        }
        List<String> duplicates = new ArrayList<>();
        List<Long> missing = new ArrayList<>();
        for (long id = 1; id <= rows; id++) {
            Integer n = inserts.get(id);
            if (n == null) {
                missing.add(id);
            } else if (n != 1) {
                duplicates.add(id + " x" + n);
            }
        }
        assertEquals("rows whose insert is missing from the change log", List.of(), missing);
        assertEquals("rows whose insert is stored more than once", List.of(), duplicates);
        assertEquals("inserts of rows that were never written", rows, inserts.size());
    }

    /**
     * Polls the replica until it holds upstream's rows: the replicator signals nothing a test can
     * observe, and after its restarts it may still be catching up; bounded by the deadline.
     */
    private static void awaitReplicaRows(Pipeline pipeline, List<List<String>> expected) throws Exception {
        long deadline = System.nanoTime() + Pipeline.SLOW_WAIT.toNanos();
        List<List<String>> replicaRows;
        while (true) {
            try (Connection c = pipeline.replica()) {
                replicaRows = Pipeline.rows(c, "SELECT id, payload FROM " + TABLE + " ORDER BY id");
            }
            if (replicaRows.equals(expected) || System.nanoTime() > deadline) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        if (!replicaRows.equals(expected)) {
            List<List<String>> onlyUpstream = new ArrayList<>(expected);
            onlyUpstream.removeAll(replicaRows);
            List<List<String>> onlyReplica = new ArrayList<>(replicaRows);
            onlyReplica.removeAll(expected);
            throw new AssertionError("replica differs from upstream (" + replicaRows.size() + " vs " + expected.size()
                    + " rows): only upstream " + abbreviate(onlyUpstream) + ", only replica " + abbreviate(onlyReplica)
                    + "; replica at " + pipeline.replicaStateVersion());
        }
    }

    private static String abbreviate(List<?> list) {
        return list.size() <= 20 ? list.toString() : list.subList(0, 20) + "... (" + list.size() + ")";
    }

    /** Waits until the writer committed row {@code id}; the writer counts, there is no event. */
    private static void awaitWritten(AtomicLong written, long id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (written.get() < id) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("writer stuck at " + written.get() + ", expected " + id);
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }

    private Bundle bundle(String symbolicName) {
        return Arrays.stream(context.getBundles()).filter(b -> symbolicName.equals(b.getSymbolicName())).findFirst()
                .orElseThrow(() -> new AssertionError(symbolicName + " is not installed"));
    }

    /**
     * Updates {@code bundle} from its location and waits, through a service listener, until the
     * updated bundle registered {@code service} again.
     */
    private void updateAndAwaitService(Bundle bundle, Class<?> service) throws Exception {
        CountDownLatch registered = new CountDownLatch(1);
        ServiceListener listener = event -> {
            if (event.getType() == ServiceEvent.REGISTERED
                    && event.getServiceReference().getBundle().getBundleId() == bundle.getBundleId()) {
                registered.countDown();
            }
        };
        context.addServiceListener(listener, "(objectClass=" + service.getName() + ")");
        try {
            bundle.update();
            assertEquals(bundle.getSymbolicName() + " after update", Bundle.ACTIVE, bundle.getState());
            assertTrue(bundle.getSymbolicName() + " did not register " + service.getSimpleName() + " again",
                    registered.await(Pipeline.SLOW_WAIT.toSeconds(), TimeUnit.SECONDS));
        } finally {
            context.removeServiceListener(listener);
        }
    }

    private long changeStreamerServiceId() throws Exception {
        var refs = context.getServiceReferences(ChangeStreamer.class, null);
        assertEquals("ChangeStreamer services", 1, refs.size());
        return (Long) refs.iterator().next().getProperty(org.osgi.framework.Constants.SERVICE_ID);
    }

    /** Waits until a {@link ChangeStreamer} service is registered (the storer update restarts it). */
    private void awaitChangeStreamer() throws Exception {
        CountDownLatch present = new CountDownLatch(1);
        ServiceListener listener = event -> {
            if (event.getType() == ServiceEvent.REGISTERED) {
                present.countDown();
            }
        };
        String filter = "(objectClass=" + ChangeStreamer.class.getName() + ")";
        context.addServiceListener(listener, filter);
        try {
            if (context.getServiceReferences(ChangeStreamer.class, null).isEmpty()) {
                assertTrue("no ChangeStreamer service after the storer update",
                        present.await(Pipeline.SLOW_WAIT.toSeconds(), TimeUnit.SECONDS));
            }
        } finally {
            context.removeServiceListener(listener);
        }
    }
}
