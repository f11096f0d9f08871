package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * The live status page in a real browser (headless Chromium): opening {@code /} on the runtime's
 * port lands on the page, which shows the pipeline; a WebSocket subscriber connecting raises the
 * subscriber count, and a row written upstream moves the stored and replica watermarks. A
 * screenshot is saved as {@code target/status-page.png}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class StatusPageBrowserIT {

    private static final String SETTLE = "it_page";

    @Inject
    private BundleContext context;

    private Pipeline pipeline;
    private String replicaVersion;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-page-"),
                "CREATE TABLE " + SETTLE + " (id int8 PRIMARY KEY)");
    }

    @Before
    public void awaitPipeline() throws Exception {
        pipeline = new Pipeline(context);
        replicaVersion = pipeline.awaitStreaming();
    }

    @Test
    public void aPersonSeesThePipelineMoveWhenARowIsWritten() throws Exception {
        String start = pipeline.settledWatermark(SETTLE);
        try (HeadlessChromium browser = HeadlessChromium.start()) {
            browser.navigate("http://127.0.0.1:" + pipeline.port() + "/");
            browser.awaitText("healthy", t -> t.equals("healthy"), "the health badge");
            assertEquals("/ui/", browser.evaluate("location.pathname").asText());
            browser.awaitText("streamer-state", t -> t.startsWith("streaming"), "the streaming state");
            browser.awaitText("stored-watermark", t -> t.compareTo(start) >= 0 && !t.equals("–"),
                    "the stored watermark " + start);
            // The in-process backup replicator is the one subscriber so far.
            browser.awaitText("subscriber-count", t -> t.equals("1"), "one subscriber");
            browser.awaitText("replica-watermark", t -> t.compareTo(start) >= 0 && !t.equals("–"),
                    "the replica at " + start);

            ChangesClient sub = ChangesClient.connect(pipeline.http(),
                    ChangesClient.changesUri(pipeline.port(), 6, ChangesClient.query("it-page", replicaVersion, start)));
            assertEquals("status", sub.awaitFirstFrame().type());
            browser.awaitText("subscriber-count", t -> t.equals("2"), "the new subscriber");

            String written = pipeline.settledWatermark(SETTLE);
            assertTrue(written.compareTo(start) > 0);
            // Later transactions (a lag report) may move them further; never less.
            browser.awaitText("stored-watermark", t -> t.compareTo(written) >= 0, "the new stored watermark " + written);
            browser.awaitText("replica-watermark", t -> t.compareTo(written) >= 0, "the replica at " + written);
            String changes = browser.awaitText("streamer-changes", t -> !t.equals("–") && Long.parseLong(t) > 0,
                    "the change count");
            assertTrue(changes, Long.parseLong(changes) > 0);
            Path shot = Path.of(System.getProperty("zrm.it.target", "target"), "status-page.png").toAbsolutePath();
            browser.screenshot(shot);
            assertTrue(Files.size(shot) > 10_000);
            sub.close();
        }
    }
}
