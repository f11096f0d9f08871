package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

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
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleListener;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.hooks.bundle.FindHook;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogListener;
import org.osgi.service.log.LogReaderService;

/**
 * The shipped runtime inside a real Felix: everything resolves and starts, configuration
 * reaches DS components live, the deploy folder installs bundles, and a broken configuration
 * file is reported without taking the framework down.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class RuntimeIT {
    // The whole replication pipeline is configured (storer, change source, change streamer,
    // replicator), as in the shipped runtime: /status is healthy only when every ZRM component is
    // active.

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String STATUS_SOURCE = "org.zrm.admin.internal.StatusSource";

    @Inject
    private BundleContext context;

    @Inject
    private ConfigurationAdmin configAdmin;

    @Inject
    private LogReaderService logReader;

    @Inject
    private CommandProcessor commands;

    private final ObjectMapper json = new ObjectMapper();

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-"));
    }

    @Test
    public void everyRuntimeBundleResolvesAndIsActive() throws Exception {
        List<String> notActive = new ArrayList<>();
        for (Bundle bundle : context.getBundles()) {
            boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            int expected = fragment ? Bundle.RESOLVED : Bundle.ACTIVE;
            if (bundle.getState() != expected) {
                notActive.add(bundle.getSymbolicName() + " state=" + bundle.getState());
            }
        }
        assertTrue("bundles not active: " + notActive, notActive.isEmpty());

        JsonNode status = getStatus();
        assertEquals(new java.io.File(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR)).getAbsolutePath(),
                status.get("configDir").asText());
        List<String> zrmBundles = new ArrayList<>();
        status.get("bundles").forEach(b -> {
            zrmBundles.add(b.get("symbolicName").asText());
            assertEquals(b.toString(), "ACTIVE", b.get("state").asText());
        });
        assertTrue(zrmBundles.toString(), zrmBundles.containsAll(List.of("org.zrm.api", "org.zrm.admin", "org.zrm.logbridge")));
        assertTrue(status.toString(), status.get("healthy").asBoolean());
        status.get("components").forEach(c -> {
            String state = c.get("state").asText();
            assertTrue(c.toString(), state.equals("ACTIVE") || state.equals("SATISFIED"));
        });
    }

    @Test
    public void theWeavingScopeStartsBeforeSpiFlyAndHidesJettyFromItAlone() throws Exception {
        Bundle scope = Bundles.named(context, "org.zrm.weavingscope");
        Bundle spifly = Bundles.named(context, "org.apache.aries.spifly.dynamic.bundle");
        Bundle jetty = Bundles.named(context, "org.apache.felix.http.jetty12");
        int scopeLevel = scope.adapt(BundleStartLevel.class).getStartLevel();
        int spiflyLevel = spifly.adapt(BundleStartLevel.class).getStartLevel();
        // Felix starts by level, then by bundle id; the test setup puts the bundles below the
        // logging chain's level on level 1, installed in the bndrun's order.
        assertTrue("the weaving scope starts first: levels " + scopeLevel + "/" + spiflyLevel + ", ids "
                + scope.getBundleId() + "/" + spifly.getBundleId(), scopeLevel < spiflyLevel
                || scopeLevel == spiflyLevel && scope.getBundleId() < spifly.getBundleId());

        ServiceReference<?>[] hooks = context.getServiceReferences(FindHook.class.getName(), null);
        ServiceReference<?> ours = Arrays.stream(hooks == null ? new ServiceReference<?>[0] : hooks)
                .filter(r -> r.getBundle().equals(scope)).findFirst().orElseThrow();
        FindHook hook = (FindHook) context.getService(ours);
        try {
            List<Bundle> seenBySpiFly = new ArrayList<>(List.of(context.getBundles()));
            hook.find(spifly.getBundleContext(), seenBySpiFly);
            assertTrue("SPI Fly must not see Jetty", !seenBySpiFly.contains(jetty));
            assertTrue("SPI Fly must still see logback, SLF4J's provider",
                    seenBySpiFly.contains(Bundles.named(context, "ch.qos.logback.classic")));
            assertTrue("everyone else sees Jetty", List.of(context.getBundles()).contains(jetty));
        } finally {
            context.ungetService(ours);
        }
    }

    @Test
    public void gogoStatusCommandPrintsTheSameInformation() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        CommandSession session = commands.createSession(InputStream.nullInputStream(), print, print);
        Object result;
        try {
            result = session.execute("zrm:status");
        } finally {
            session.close();
        }
        String text = String.valueOf(result);
        assertTrue(text, text.contains("configDir: " + getStatus().get("configDir").asText()));
        assertTrue(text, text.contains("org.zrm.admin.internal.AdminComponent"));
        assertTrue(text, text.matches("(?s).*ACTIVE\\s+org\\.zrm\\.api.*"));
    }

    @Test
    public void configurationChangeReachesTheComponentWithoutRestart() throws Exception {
        Path movedDeploy = Files.createTempDirectory("zrm-it-deploy-");
        long serviceIdBefore = statusSourceServiceId();
        AtomicBoolean unregistered = new AtomicBoolean();
        CompletableFuture<Object> modified = new CompletableFuture<>();
        ServiceListener listener = event -> {
            if (event.getType() == ServiceEvent.UNREGISTERING) {
                unregistered.set(true);
            } else if (event.getType() == ServiceEvent.MODIFIED
                    && movedDeploy.toString().equals(event.getServiceReference().getProperty("deployDir"))) {
                modified.complete(event.getServiceReference().getProperty("deployDir"));
            }
        };
        context.addServiceListener(listener, "(objectClass=" + STATUS_SOURCE + ")");
        try {
            Hashtable<String, Object> properties = new Hashtable<>();
            properties.put("deployDir", movedDeploy.toString());
            properties.put("deployPollMillis", "200");
            configAdmin.getConfiguration("org.zrm.admin", "?").update(properties);
            modified.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            context.removeServiceListener(listener);
        }
        assertFalse("the admin component was restarted instead of modified", unregistered.get());
        assertEquals(serviceIdBefore, statusSourceServiceId());
        assertEquals(movedDeploy.toString(), getStatus().get("deployDir").asText());

        // The watcher moved with the configuration: a bundle dropped there is started.
        Bundle dropped = dropBundle(movedDeploy, "org.zrm.it.moved");
        assertEquals(Bundle.ACTIVE, dropped.getState());
    }

    @Test
    public void configurationFileIsInterpolatedAndAppliedLive() throws Exception {
        Path configDir = Path.of(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR));
        String expected = context.getProperty(ZrmRuntimeOptions.ALT_DEPLOY_DIR);
        CompletableFuture<Object> applied = new CompletableFuture<>();
        ServiceListener listener = event -> {
            if (event.getType() == ServiceEvent.MODIFIED
                    && expected.equals(event.getServiceReference().getProperty("deployDir"))) {
                applied.complete(event.getServiceReference().getProperty("deployPollMillis"));
            }
        };
        context.addServiceListener(listener, "(objectClass=" + STATUS_SOURCE + ")");
        try {
            Path staged = Files.createTempFile("admin", ".tmp");
            // The same placeholder syntax the shipped files use for ZERO_* variables ($[env:...]).
            Files.writeString(staged, "deployDir = $[prop:" + ZrmRuntimeOptions.ALT_DEPLOY_DIR + "]\n"
                    + "deployPollMillis = $[prop:zrm.it.undefined;default=250]\n");
            Files.move(staged, configDir.resolve("org.zrm.admin.cfg"), StandardCopyOption.ATOMIC_MOVE);
            Object poll = applied.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals("250", String.valueOf(poll));
        } finally {
            context.removeServiceListener(listener);
        }
        assertEquals(expected, getStatus().get("deployDir").asText());
    }

    @Test
    public void bundleDroppedIntoTheDeployFolderIsStarted() throws Exception {
        Path deploy = Path.of(getStatus().get("deployDir").asText());
        Bundle dropped = dropBundle(deploy, "org.zrm.it.dropped");
        assertEquals(Bundle.ACTIVE, dropped.getState());
        assertTrue(dropped.getLocation(), dropped.getLocation().contains("org.zrm.it.dropped"));
    }

    @Test
    public void brokenConfigurationFileIsReportedAndTheFrameworkStaysUp() throws Exception {
        Path configDir = Path.of(context.getProperty(ZrmRuntimeOptions.CONFIG_DIR));
        String fileName = "org.zrm.broken.cfg";
        CompletableFuture<LogEntry> reported = new CompletableFuture<>();
        LogListener listener = entry -> {
            String text = entry.getMessage() + " " + entry.getException();
            if (text.contains(fileName)) {
                reported.complete(entry);
            }
        };
        logReader.addLogListener(listener);
        try {
            Path staged = Files.createTempFile("broken", ".tmp");
            // "\\uZZZZ" is not a valid unicode escape: the properties parser rejects the file.
            Files.writeString(staged, "upstream.db = \\uZZZZ\n");
            Files.move(staged, configDir.resolve(fileName), StandardCopyOption.ATOMIC_MOVE);
            LogEntry entry = reported.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(entry.getLogLevel().toString(), entry.getLogLevel().implies(org.osgi.service.log.LogLevel.ERROR));
        } finally {
            logReader.removeLogListener(listener);
        }
        assertEquals(Bundle.ACTIVE, context.getBundle(0).getState());
        assertNotNull(getStatus().get("bundles"));
        assertEquals(null, configAdmin.listConfigurations("(service.pid=org.zrm.broken)"));
    }

    private long statusSourceServiceId() throws Exception {
        var references = context.getServiceReferences(STATUS_SOURCE, null);
        assertNotNull("no StatusSource service", references);
        assertEquals(1, references.length);
        return (Long) references[0].getProperty(Constants.SERVICE_ID);
    }

    /** Writes a minimal bundle into {@code folder} and waits until FileInstall has started it. */
    private Bundle dropBundle(Path folder, String symbolicName) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        BundleListener listener = event -> {
            if (event.getType() == BundleEvent.STARTED && symbolicName.equals(event.getBundle().getSymbolicName())) {
                started.countDown();
            }
        };
        context.addBundleListener(listener);
        try {
            Path staged = Files.createTempFile(symbolicName, ".tmp");
            writeBundle(staged, symbolicName);
            // Move atomically so the watcher never sees a half-written jar.
            Files.move(staged, folder.resolve(symbolicName + ".jar"), StandardCopyOption.ATOMIC_MOVE);
            assertTrue(symbolicName + " was not started within " + WAIT,
                    started.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        } finally {
            context.removeBundleListener(listener);
        }
        for (Bundle bundle : context.getBundles()) {
            if (symbolicName.equals(bundle.getSymbolicName())) {
                return bundle;
            }
        }
        throw new AssertionError(symbolicName + " started but is not installed");
    }

    private static void writeBundle(Path jar, String symbolicName) throws IOException {
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue(Constants.BUNDLE_MANIFESTVERSION, "2");
        main.putValue(Constants.BUNDLE_SYMBOLICNAME, symbolicName);
        main.putValue(Constants.BUNDLE_VERSION, "1.0.0");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file, manifest)) {
            out.flush();
        }
    }

    private JsonNode getStatus() throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + context.getProperty(ZrmRuntimeOptions.HTTP_PORT) + "/status");
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = null;
        // The whiteboard gives a client no completion signal for a servlet registration, so a
        // 404 or refused connection right after start is retried within a bounded window.
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            try {
                response = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return json.readTree(response.body());
                }
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("GET " + uri + " answered " + (response == null ? "nothing" : response.statusCode()));
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }
}
