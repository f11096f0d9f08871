package org.zrm.backup.litestream3.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.zrm.backup.BackupMonitor;
import org.zrm.backup.ForwardingBackupMonitor;
import org.zrm.config.NodeIdentity;

/**
 * Registers the litestream3 {@link BackupMonitor} for PID {@value #PID} whenever that PID is
 * configured, even with an empty backup URL (the coordinator then reports it as unconfigured).
 * Activation only validates and builds; work starts when the coordinator calls {@link #start}.
 * Invalid configuration fails activation with an {@link IllegalArgumentException} naming the
 * property.
 */
@Component(service = BackupMonitor.class, configurationPid = {NodeIdentity.PID, Litestream3MonitorComponent.PID},
        configurationPolicy = ConfigurationPolicy.REQUIRE,
        property = BackupMonitor.STRATEGY + "=" + BackupMonitor.STRATEGY_LITESTREAM3)
public final class Litestream3MonitorComponent extends ForwardingBackupMonitor {

    static final String PID = "org.zrm.backup.litestream3";

    private final Litestream3Monitor monitor;

    @Activate
    public Litestream3MonitorComponent(Litestream3MonitorConfig config) {
        this.monitor = create(config, System.getenv(), Clock.systemUTC());
    }

    /** Validates {@code config} and builds the monitor; {@code environment} is the JVM's. */
    static Litestream3Monitor create(Litestream3MonitorConfig config, Map<String, String> environment, Clock clock) {
        String backupURL = trim(config.litestream_backupURL());
        int port = config.litestream_port();
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("litestream.port must be within 1..65535, got " + port);
        }
        String metrics = trim(config.litestream_metricsURL());
        URI metricsURL = metricsURL(metrics.isEmpty() ? "http://127.0.0.1:" + port + "/metrics" : metrics);
        String replicaFile = trim(config.replica_file());
        if (replicaFile.isEmpty()) {
            throw new IllegalArgumentException("replica.file must not be empty");
        }
        Litestream3Settings settings = new Litestream3Settings(backupURL, metricsURL, path("replica.file", replicaFile),
                millis("litestream.checkIntervalMs", config.litestream_checkIntervalMs()),
                millis("litestream.wedgedShutdownGraceMs", config.litestream_wedgedShutdownGraceMs()),
                millis("litestream.metricsTimeoutMs", config.litestream_metricsTimeoutMs()),
                Litestream3Settings.DEFAULT_MAX_METRICS_BYTES);
        Duration listTimeout = millis("litestream.listBackupTimeoutMs", config.litestream_listBackupTimeoutMs());
        String executable = trim(config.litestream_executable());
        BackupStateVerifier verifier;
        if (backupURL.isEmpty()) {
            // Unconfigured: registered so the coordinator can say why it is not started; never started.
            verifier = signal -> {
                throw new IllegalStateException("litestream.backupURL is empty");
            };
        } else {
            if (executable.isEmpty()) {
                throw new IllegalArgumentException("litestream.executable (ZERO_LITESTREAM_EXECUTABLE) is required when"
                        + " litestream.backupURL is set: it lists the destination to verify the backup");
            }
            verifier = new LitestreamCli(path("litestream.executable", executable), replicaFile, backupURL,
                    LitestreamCli.environment(environment, replicaFile, backupURL, configPath(config, replicaFile),
                            port, trim(config.litestream_endpoint()), trim(config.litestream_region())),
                    listTimeout);
        }
        return new Litestream3Monitor(settings, verifier, clock);
    }

    /**
     * The listings must read the configuration {@code litestream replicate} runs with. Empty: the
     * one the litestream process bundle ({@code org.zrm.litestream}) generates when its own
     * {@code litestream.configPath} is empty, {@code <replica.file>-litestream.yml}. An operator who
     * runs litestream outside ZRM sets {@code litestream.configPath} here and there.
     */
    static String configPath(Litestream3MonitorConfig config, String replicaFile) {
        String configured = trim(config.litestream_configPath());
        if (!configured.isEmpty()) {
            return configured;
        }
        Path generated = Path.of(replicaFile).toAbsolutePath();
        generated = generated.resolveSibling(generated.getFileName() + "-litestream.yml");
        return generated.toString();
    }

    private static URI metricsURL(String text) {
        String problem;
        try {
            URI uri = new URI(text);
            String scheme = uri.getScheme();
            if (scheme != null && (scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
                    && uri.getHost() != null) {
                return uri;
            }
            problem = "";
        } catch (URISyntaxException e) {
            problem = " (" + e.getMessage() + ")";
        }
        throw new IllegalArgumentException("litestream.metricsURL must be an http:// or https:// URL with a host, got '"
                + text + "'" + problem);
    }

    private static Duration millis(String name, long ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + ms);
        }
        return Duration.ofMillis(ms);
    }

    private static Path path(String name, String value) {
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(name + " is not a valid path: " + e.getMessage(), e);
        }
    }

    private static String trim(String s) {
        return s == null ? "" : s.strip();
    }

    @Deactivate
    void deactivate() {
        monitor.stop();
    }

    @Override
    protected BackupMonitor delegate() {
        return monitor;
    }
}
