package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import javax.inject.Inject;
import jakarta.servlet.Servlet;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.options.SystemPropertyOption;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * The shipped runtime with {@code changeSource.target = (zrm.changesource.type=custom)}: the
 * custom source connects to an in-test endpoint ({@link CustomEndpointServlet}, on this runtime's
 * HTTP whiteboard), builds the replica from the stream's first transaction, then streams live
 * transactions into the change log, the replica and a WebSocket subscriber.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class CustomChangeSourceIT {

    private static final String PATH = "/it/custom/changes/v0/stream";

    @Inject
    private BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        Path work = Files.createTempDirectory("zrm-it-custom-");
        Option[] options = ZrmRuntimeOptions.streamingOptions(work);
        String port = null;
        for (Option o : options) {
            if (o instanceof SystemPropertyOption p && ZrmRuntimeOptions.HTTP_PORT.equals(p.getKey())) {
                port = p.getValue();
            }
        }
        Path conf = work.resolve("conf");
        Files.writeString(conf.resolve("org.zrm.changestreamer.cfg"),
                "changeSource.target = (zrm.changesource.type=custom)\n", StandardOpenOption.APPEND);
        Files.writeString(conf.resolve("org.zrm.changesource.custom.cfg"),
                "upstream.db = ws://127.0.0.1:" + port + PATH + "?apiKey=it-secret\n");
        return options;
    }

    @Test
    public void theReplicaIsSyncedFromTheStreamAndLiveChangesReachStoreReplicaAndSubscriber() throws Exception {
        CustomEndpointServlet endpoint = new CustomEndpointServlet();
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("osgi.http.whiteboard.servlet.pattern", PATH);
        ServiceRegistration<Servlet> registration = context.registerService(Servlet.class, endpoint, properties);
        try {
            Pipeline pipeline = new Pipeline(context);
            assertEquals("0a", pipeline.awaitStreaming());
            pipeline.awaitStored("0c");
            pipeline.awaitReplicaAt("0c");

            List<java.util.Map<String, List<String>>> queries = endpoint.queries;
            assertTrue(queries.toString(), queries.size() >= 2);
            assertEquals(List.of("it-secret"), queries.get(0).get("apiKey"));
            assertEquals(List.of("zero"), queries.get(0).get("appID"));
            assertEquals(List.of("0"), queries.get(0).get("shardNum"));
            assertNull(queries.get(0).get("lastWatermark"));
            assertEquals(List.of("0a"), queries.get(1).get("lastWatermark"));
            assertEquals(List.of("0a"), queries.get(1).get("replicaVersion"));

            try (Connection replica = pipeline.replica()) {
                assertEquals(List.of(List.of("1", "snapshot", "0a"), List.of("2", "live 0b", "0b"),
                        List.of("3", "live 0c", "0c")),
                        Pipeline.rows(replica, "SELECT id, label, _0_version FROM it_custom ORDER BY id"));
                assertEquals(List.of(List.of("0a")),
                        Pipeline.rows(replica, "SELECT replicaVersion FROM \"_zero.replicationConfig\""));
            }
            assertFalse(Files.exists(Path.of(context.getProperty(ZrmRuntimeOptions.REPLICA_FILE) + ".initial-sync")));

            ChangesClient sub = ChangesClient.connect(pipeline.http(),
                    ChangesClient.changesUri(pipeline.port(), 6, ChangesClient.query("it-custom-sub", "0a", "0a")));
            ChangesClient.Transaction t1 = sub.nextTransaction();
            ChangesClient.Transaction t2 = sub.nextTransaction();
            assertEquals("0b", t1.commitWatermark());
            assertEquals(List.of(2L), t1.ids());
            assertEquals("0c", t2.commitWatermark());
            assertEquals(List.of(3L), t2.ids());

            // The stored commits were acked upstream, the last one at 0c.
            List<String> acks = new java.util.ArrayList<>();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (acks.stream().noneMatch(a -> a.contains("\"0c\"")) && System.nanoTime() < deadline) {
                String a = endpoint.acks.poll(1, java.util.concurrent.TimeUnit.SECONDS);
                if (a != null) {
                    acks.add(a);
                }
            }
            assertTrue(acks.toString(), acks.stream().anyMatch(a -> a.contains("\"0c\"")));
        } finally {
            registration.unregister();
        }
    }
}
