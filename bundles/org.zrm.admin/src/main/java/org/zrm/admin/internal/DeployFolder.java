package org.zrm.admin.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;

import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Keeps one FileInstall watcher pointed at the deploy folder. FileInstall's primary watcher
 * (framework property {@code felix.fileinstall.dir}) serves the configuration folder; extra
 * watchers are factory configurations of PID {@value #FILEINSTALL_FACTORY_PID}, which is how this
 * class adds the deploy folder without a second copy of FileInstall.
 */
final class DeployFolder {

    static final String FILEINSTALL_FACTORY_PID = "org.apache.felix.fileinstall";
    /** Name of our factory configuration; its PID is {@code org.apache.felix.fileinstall~zrm-deploy}. */
    static final String WATCHER_NAME = "zrm-deploy";

    private final ConfigurationAdmin configAdmin;

    DeployFolder(ConfigurationAdmin configAdmin) {
        this.configAdmin = configAdmin;
    }

    /**
     * Points the watcher at {@code folder}, creating the folder when missing. Idempotent: an
     * unchanged setting does not restart the watcher.
     */
    void watch(Path folder, long pollMillis) throws IOException {
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            throw new IOException("cannot create deploy folder " + folder + ": " + e.getMessage(), e);
        }
        Dictionary<String, Object> properties = new Hashtable<>();
        properties.put("felix.fileinstall.dir", folder.toString());
        properties.put("felix.fileinstall.poll", Long.toString(pollMillis));
        properties.put("felix.fileinstall.noInitialDelay", "true");
        // Only bundles belong here; configuration lives in the configuration folder.
        properties.put("felix.fileinstall.filter", ".*\\.jar");
        properties.put("felix.fileinstall.bundles.new.start", "true");
        watcher().updateIfDifferent(properties);
    }

    /** Removes the watcher; bundles it installed stay installed. */
    void close() throws IOException {
        watcher().delete();
    }

    private Configuration watcher() throws IOException {
        // "?" lets FileInstall, a different bundle, receive a configuration created here.
        return configAdmin.getFactoryConfiguration(FILEINSTALL_FACTORY_PID, WATCHER_NAME, "?");
    }

    static Path resolve(String configured, String frameworkProperty) {
        String chosen = !configured.isBlank() ? configured
                : frameworkProperty != null && !frameworkProperty.isBlank() ? frameworkProperty : "deploy";
        return Path.of(chosen).toAbsolutePath().normalize();
    }

    static void checkPoll(long pollMillis) {
        if (pollMillis < 100) {
            throw new IllegalArgumentException("deployPollMillis must be at least 100, got " + pollMillis);
        }
    }

    static UncheckedIOException unchecked(IOException e) {
        return new UncheckedIOException(e.getMessage(), e);
    }
}
