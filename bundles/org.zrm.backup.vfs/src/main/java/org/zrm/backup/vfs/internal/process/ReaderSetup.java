package org.zrm.backup.vfs.internal.process;

import java.nio.file.Path;
import java.time.Duration;
import org.osgi.framework.BundleContext;
import org.zrm.backup.vfs.internal.reader.ReplicaUrl;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;
import org.zrm.config.CommandLine;

/**
 * Turns the monitor's configuration into reader-child sources: the child's environment, its
 * command (the configured {@code litestream.vfsReaderCommand}, else the default JVM command) and
 * the probe timeout. Validates everything up front so bad configuration fails activation.
 */
public final class ReaderSetup {

    /** How long closing waits after SIGTERM before SIGKILL. */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(5);

    private final ReaderCommand command;
    private final ReaderEnvironment environment;
    private final Duration timeout;

    /**
     * @param backupURL {@code litestream.backupURL}, empty when unconfigured
     * @param endpoint {@code litestream.endpoint}, empty for none
     * @param region {@code litestream.region}, empty for none
     * @param extensionPath {@code litestream.vfsExtensionPath}
     * @param logLevel {@code litestream.logLevel}
     * @param logFile {@code litestream.vfsLogFile}, empty for none
     * @param readerCommand {@code litestream.vfsReaderCommand}, empty for the default
     * @param timeout {@code litestream.vfsProbeTimeoutMs}
     * @param javaHome the JVM for the default command
     * @param context this bundle's context (locating jars), or {@code null} outside OSGi
     * @throws IllegalArgumentException if the reader command or the backup URL is malformed
     */
    public ReaderSetup(String backupURL, String endpoint, String region, String extensionPath, String logLevel,
            String logFile, String readerCommand, Duration timeout, Path javaHome, BundleContext context) {
        String replicaUrl = backupURL.isEmpty() ? "" : ReplicaUrl.build(backupURL, endpoint, region);
        this.environment = new ReaderEnvironment(replicaUrl, logLevel, logFile, extensionPath);
        this.command = readerCommand.isEmpty() ? new DefaultReaderCommand(javaHome, new ReaderClasspath(context))
                : ReaderCommand.of(CommandLine.split(readerCommand));
        this.timeout = timeout;
    }

    /** @return a new source with no child yet; each monitor activation gets its own */
    public WatermarkSource newSource() {
        return new ChildProcessWatermarkSource(new ReaderLauncher(command, environment), timeout, CLOSE_GRACE);
    }
}
