package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import javax.inject.Inject;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

/**
 * Implementations chosen by configuration, in the shipped runtime: the change source by the
 * streamer's {@code changeSource.target}, the replicator's upstream by {@code upstream.target}.
 * A target that nothing matches leaves a component unsatisfied, {@code /status} unhealthy and
 * naming the missing service and filter, and the streamer's one error; fixing the {@code .cfg}
 * brings the pipeline back. The replicator is switched to the remote upstream (this runtime's own
 * WebSocket endpoint) and keeps replicating.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class WiringByConfigurationIT {

    private static final String STREAMER_CFG = "org.zrm.changestreamer.cfg";
    private static final String REPLICATOR_CFG = "org.zrm.replicator.cfg";
    private static final String SELECTION = "org.zrm.changestreamer.internal.ChangeSourceSelection";

    @Inject
    private BundleContext context;

    private Pipeline pipeline;
    private Path configDir;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-wiring-"),
                "CREATE TABLE it_wiring (id int8 PRIMARY KEY, label text)");
    }

    @Before
    public void awaitPipeline() throws Exception {
        pipeline = new Pipeline(context);
        configDir = Path.of(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR));
        pipeline.awaitStreaming();
    }

    @Test
    public void anUnmatchedSourceTargetIsNamedInStatusAndFixingTheCfgResumes() throws Exception {
        JsonNode source = pipeline.status().path("sections").path("changestreamer").path("changeSource");
        assertEquals(source.toString(), "(zrm.changesource.type=pg)", source.path("target").asText());
        assertTrue(source.toString(), source.path("selected").asBoolean());

        String original = Files.readString(configDir.resolve(STREAMER_CFG));
        writeCfg(STREAMER_CFG, original + "changeSource.target = (zrm.changesource.type=nonsense)\n"
                + "changeSource.graceMs = 200\n");
        JsonNode broken = pipeline.awaitStatus("the selection unsatisfied and the streamer's error", s ->
                !s.path("healthy").asBoolean()
                        && "UNSATISFIED_REFERENCE".equals(component(s, SELECTION).path("state").asText())
                        && s.path("sections").path("changestreamer").path("lastError").asText()
                                .startsWith("no change source matches"));
        JsonNode reference = component(broken, SELECTION).path("unsatisfiedReferences").path(0);
        assertEquals(broken.toString(), "changeSource", reference.path("name").asText());
        assertEquals("org.zrm.changesource.ChangeSource", reference.path("service").asText());
        assertEquals("(zrm.changesource.type=nonsense)", reference.path("target").asText());
        String error = broken.path("sections").path("changestreamer").path("lastError").asText();
        assertTrue(error, error.contains("registered change-source types: custom, pg"));
        // Waiting for a source: "starting", or "backoff" when the swap ended a stream of the old
        // selection first (the streamer and the selection are reconfigured independently).
        String state = broken.path("sections").path("changestreamer").path("state").asText();
        assertTrue(state, state.equals("starting") || state.equals("backoff"));

        writeCfg(STREAMER_CFG, original);
        pipeline.awaitStreaming();
        pipeline.exec("INSERT INTO it_wiring VALUES (1, 'after the fix')");
        pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_wiring", 1));
        assertTrue(pipeline.awaitStatus("healthy again", s -> s.path("healthy").asBoolean()).path("healthy").asBoolean());
    }

    @Test
    public void theReplicatorFollowsItsUpstreamTarget() throws Exception {
        String original = Files.readString(configDir.resolve(REPLICATOR_CFG));
        try {
            writeCfg(REPLICATOR_CFG, original + "upstream.target = (zrm.replicator.upstream=remote)\n"
                    + "changeStreamer.uri = ws://127.0.0.1:" + pipeline.port() + "\n");
            pipeline.awaitStatus("the replicator on the remote upstream", s -> {
                JsonNode r = s.path("sections").path("replicator");
                return "remote".equals(r.path("changeStreamer").asText()) && "REPLICATING".equals(r.path("phase").asText());
            });
            pipeline.exec("INSERT INTO it_wiring VALUES (2, 'over the socket')");
            pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_wiring", 2));

            // The remote upstream without a URI: one clear activation failure, and the runtime unhealthy.
            writeCfg(REPLICATOR_CFG, original + "upstream.target = (zrm.replicator.upstream=remote)\n"
                    + "changeStreamer.uri = \n");
            JsonNode failed = pipeline.awaitStatus("the missing URI reported", s ->
                    !s.path("healthy").asBoolean() && s.path("components").toString().contains("changeStreamer.uri is empty"));
            assertFalse(failed.path("healthy").asBoolean());
        } finally {
            writeCfg(REPLICATOR_CFG, original);
        }
        pipeline.awaitStatus("the replicator back in process", s -> {
            JsonNode r = s.path("sections").path("replicator");
            return "in-process".equals(r.path("changeStreamer").asText()) && "REPLICATING".equals(r.path("phase").asText());
        });
        pipeline.exec("INSERT INTO it_wiring VALUES (3, 'in process again')");
        pipeline.awaitReplicaAt(pipeline.awaitStoredInsert("it_wiring", 3));
    }

    private static JsonNode component(JsonNode status, String name) {
        for (JsonNode c : status.path("components")) {
            if (name.equals(c.path("name").asText())) {
                return c;
            }
        }
        return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }

    private void writeCfg(String name, String text) throws IOException {
        // Written beside and renamed, so FileInstall never reads half a file.
        Path tmp = configDir.resolve(name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, configDir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
