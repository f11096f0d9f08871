package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.List;
import java.util.Properties;

import javax.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.ops4j.pax.exam.util.Filter;
import org.osgi.framework.BundleContext;
import org.zrm.changelog.ChangeLog;
import org.zrm.changelog.ReplicationState;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.SubscriptionState;

/**
 * The pipeline bundles inside the shipped runtime, configured through {@code .cfg} files against
 * a real PostgreSQL: the storer's {@link ChangeLog} and the Postgres {@link ChangeSource} are
 * registered with their selection properties, the storer migrates its schema on first use, and
 * the change source reports itself in {@code /status} with the password masked.
 *
 * <p>This test calls {@link ChangeLog#ensureReplicationConfig} itself, which a running change
 * streamer would also do (with the real replica version) and race. Every ZRM component is still
 * configured, because {@code /status} is healthy only when all of them are active, but the streamer
 * is kept idle (see {@link ZrmRuntimeOptions#idleStreamerOptions}): it waits for a change source of
 * a type nothing registers, so it never initialises a source, writes the replication config or
 * takes ownership of the change log.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class PipelineBundlesIT {

    @Inject
    private BundleContext context;

    @Inject
    @Filter("(zrm.changelog.kind=postgres)")
    private ChangeLog changeLog;

    @Inject
    @Filter("(zrm.changesource.type=pg)")
    private ChangeSource changeSource;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.idleStreamerOptions(Files.createTempDirectory("zrm-it-pipeline-"));
    }

    @Test
    public void storerMigratesTheChangeLogSchemaOnFirstUse() throws Exception {
        changeLog.ensureReplicationConfig(new SubscriptionState("0a", List.of("zero_data"), "0a"), false);
        ReplicationState state = changeLog.replicationState();
        assertEquals("0a", state.lastWatermark());
        String uri = context.getProperty(ZrmRuntimeOptions.UPSTREAM_URI);
        URI parsed = URI.create(uri);
        Properties credentials = new Properties();
        credentials.setProperty("user", parsed.getUserInfo() == null ? "postgres" : parsed.getUserInfo().split(":")[0]);
        try (Connection c = DriverManager.getConnection(
                "jdbc:postgresql://" + parsed.getHost() + ":" + parsed.getPort() + parsed.getPath(), credentials);
                ResultSet rs = c.createStatement().executeQuery(
                        "SELECT \"dataVersion\" FROM \"zero_0/cdc\".\"versionHistory\"")) {
            assertTrue("no versionHistory row", rs.next());
            assertEquals(6, rs.getInt(1));
        }
    }

    @Test
    public void changeSourceIsInStatusWithoutItsSecrets() throws Exception {
        assertNotNull(changeSource);
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + context.getProperty(ZrmRuntimeOptions.HTTP_PORT) + "/status")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        JsonNode status = new ObjectMapper().readTree(response.body());
        JsonNode section = status.path("sections").path("changesource.pg");
        assertFalse(response.body(), section.isMissingNode());
        assertEquals("zero_0", section.get("shard").asText());
        assertTrue(response.body(), status.get("healthy").asBoolean());
        // The streamer is active but idle, still waiting for a source: nothing here races it.
        JsonNode streamer = status.path("sections").path("changestreamer");
        assertEquals(response.body(), "starting", streamer.path("state").asText());
        assertTrue(response.body(), streamer.path("replicaVersion").isNull());
    }
}
