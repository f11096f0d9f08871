package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.function.Predicate;
import javax.inject.Inject;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

/**
 * The operator's Gogo commands of {@code org.zrm.shell} in the shipped runtime with the whole
 * pipeline streaming: each one run with {@code --json} and its output parsed.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ShellCommandsIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Inject
    private BundleContext context;

    @Inject
    private CommandProcessor commands;

    private final ObjectMapper json = new ObjectMapper();

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-shell-"),
                "CREATE TABLE it_shell (id int8 PRIMARY KEY)");
    }

    private String run(String command) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        CommandSession session = commands.createSession(InputStream.nullInputStream(), print, print);
        try {
            return String.valueOf(session.execute(command));
        } finally {
            session.close();
        }
    }

    private JsonNode runJson(String command) throws Exception {
        return json.readTree(run(command));
    }

    /** Re-runs {@code command} until its JSON satisfies {@code done}; the pipeline starts asynchronously. */
    private JsonNode await(String command, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        JsonNode last = runJson(command);
        while (!done.test(last)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(command + " did not reach the expected state within " + WAIT + ": " + last);
            }
            Thread.sleep(200);   // nothing signals "the status changed"; status polling is what an operator does too
            last = runJson(command);
        }
        return last;
    }

    @Test
    public void everyCommandAnswersInJson() throws Exception {
        // The in-process replicator subscribes once the stream is up.
        JsonNode subs = await("zrm:subscribers --json", n -> n.path("subscribers").size() > 0);
        JsonNode sub = subs.get("subscribers").get(0);
        assertTrue(sub.toString(), sub.has("id") && sub.has("acked") && sub.has("lagBytes") && sub.has("lagMs"));

        JsonNode lag = runJson("zrm:lag --json");
        assertTrue(lag.toString(), lag.get("upstreamLag").has("replicationMs") && lag.get("upstreamLag").has("endToEndMs"));
        assertTrue(lag.toString(), lag.get("stream").has("lastMessageAgeMs"));
        assertEquals(sub.get("id").asText(), lag.get("subscribers").get(0).get("id").asText());

        // Sampled every 10 s: the first sample may predate the stream that makes the slot active.
        JsonNode slots = await("zrm:slots --json", n -> n.path("slots").size() > 0
                && n.get("slots").get(0).get("active").asBoolean());
        JsonNode slot = slots.get("slots").get(0);
        assertTrue(slot.toString(), slot.get("retainedWalBytes").isNumber());
        assertTrue(slot.toString(), slot.get("active").asBoolean());
        assertFalse(slot.toString(), slot.get("orphan").asBoolean());
        JsonNode refused = runJson("zrm:slots drop " + slot.get("slot").asText() + " --json");
        assertTrue(refused.toString(), refused.get("error").asText().contains("is not an orphaned slot"));

        // Counted every 30 s: the first count may predate the change log's initial rows.
        JsonNode log = await("zrm:changelog --json", n -> n.path("rows").asLong() >= 2);
        assertTrue(log.toString(), log.get("rows").asLong() >= 2);
        assertTrue(log.toString(), log.get("oldestWatermark").isTextual());
        assertTrue(log.toString(), log.get("nextPurge").has("blockedBy"));
        assertTrue(log.toString(), log.get("nextPurgeError").isNull());

        JsonNode config = runJson("zrm:config --json");
        assertTrue(config.toString(), config.has("org.zrm.storer") && config.get("org.zrm.storer").has("change.db"));
        assertFalse(config.toString(), config.get("org.zrm.storer").has("felix.fileinstall.filename"));

        JsonNode noSuch = runJson("zrm:subscribers close no-such-subscriber testing --json");
        assertEquals("no connected subscriber with id no-such-subscriber", noSuch.get("error").asText());

        String table = run("zrm:slots");
        assertTrue(table, table.contains("WAL RETAINED") && table.contains(slot.get("slot").asText()));

        // The slot figures reach /metrics too.
        HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + context.getProperty(ZrmRuntimeOptions.HTTP_PORT) + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(metrics.body(), metrics.body().contains("zrm_pg_slot_retained_wal_bytes{slot=\""
                + slot.get("slot").asText() + "\"}"));
        assertTrue(metrics.body(), metrics.body().contains("zrm_changelog_rows"));
    }
}
