package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

/**
 * A terminal stop end to end: the replication slot is dropped by hand while the pipeline streams
 * (its walsender terminated first, as Postgres requires). The Postgres change source reports the
 * ended stream as a takeover, and the change streamer stops for good: {@code /status} turns unhealthy with the reason, {@code /metrics} shows it,
 * {@code /readyz} answers 503 and {@code /healthz} still 200. The runtime runs with
 * {@code exitOnTerminalStop = false}, so the test can look at it afterwards (with the default the
 * framework stops and the launcher exits 1 with the reason, see FrameworkStop).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class SlotDroppedIT {

    @Inject
    private BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        Path dir = Files.createTempDirectory("zrm-it-slot-");
        Option[] options = ZrmRuntimeOptions.streamingOptions(dir, "CREATE TABLE it_slot (id int8 PRIMARY KEY)");
        Files.writeString(dir.resolve("conf/org.zrm.changestreamer.cfg"), "exitOnTerminalStop = false\n",
                StandardOpenOption.APPEND);
        return options;
    }

    @Test
    public void aSlotDroppedByHandIsATerminalStop() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        pipeline.awaitStreaming();
        pipeline.exec("INSERT INTO it_slot VALUES (1)");
        pipeline.awaitStoredInsert("it_slot", 1);
        String slot = pipeline.queryStrings("SELECT slot_name FROM pg_replication_slots").get(0);

        // End the walsender, and drop the slot as soon as it is inactive (the source reconnects
        // within milliseconds, so the drop is retried until it wins the slot).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                pipeline.exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                        + " WHERE slot_name = '" + slot + "' AND active_pid IS NOT NULL",
                        "SELECT pg_drop_replication_slot('" + slot + "')");
                break;
            } catch (SQLException e) {
                assertTrue("could not drop " + slot + ": " + e.getMessage(), System.nanoTime() < deadline);
                TimeUnit.MILLISECONDS.sleep(10);
            }
        }

        JsonNode stopped = pipeline.awaitStatus("terminal stop", s ->
                s.path("sections").path("changestreamer").hasNonNull("terminalStop"));
        JsonNode terminal = stopped.path("sections").path("changestreamer").path("terminalStop");
        // Dropping a slot needs its walsender gone first. No other manager wrote itself into the
        // replica's subscriberContext, so that end is retried (not a takeover), and the retry
        // finds the slot gone: the terminal stop an operator sees names the missing slot.
        assertEquals(terminal.toString(), "SLOT_MISSING", terminal.path("kind").asText());
        assertTrue(terminal.toString(), terminal.path("reason").asText().contains("slot " + slot));
        assertEquals("the slot is gone", java.util.List.of(),
                pipeline.queryStrings("SELECT slot_name FROM pg_replication_slots"));
        assertFalse(stopped.toString(), stopped.path("healthy").asBoolean());
        String metrics = pipeline.metrics();
        assertTrue(metrics.contains("zrm_changestreamer_terminal_stop{reason=\"slot_missing\"} 1"));
        assertTrue(metrics.contains("zrm_changestreamer_healthy 0"));
        assertTrue(pipeline.get("/healthz").contains("\"healthy\" : false"));
        java.net.http.HttpResponse<String> ready = pipeline.http().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + pipeline.port() + "/readyz")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(ready.body(), 503, ready.statusCode());
        assertTrue(ready.body(), ready.body().contains("the runtime is unhealthy"));
    }
}
