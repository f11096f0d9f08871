package org.zrm.backup.vfs.internal.process;

import java.util.Locale;
import java.util.Map;
import org.zrm.backup.vfs.internal.reader.VfsWatermarkReaderMain;

/**
 * The environment of the reader child (spec §6.4). Upstream's reader sets these variables in its
 * own process before loading the extension; a JVM cannot change its environment, so the parent
 * sets them when it starts the child. Everything else is inherited from this process, including
 * the S3 credentials ({@code AWS_*}) the VFS needs.
 *
 * @param replicaUrl {@code LITESTREAM_REPLICA_URL}
 * @param logLevel {@code litestream.logLevel}; upper-cased into {@code LITESTREAM_LOG_LEVEL},
 *     {@code INFO} when empty (upstream {@code DEFAULT_VFS_LOG_LEVEL})
 * @param logFile {@code LITESTREAM_LOG_FILE}; when empty the variable is removed, and the
 *     extension logs to the child's stdout
 * @param extensionPath {@code ZERO_LITESTREAM_VFS_EXTENSION_PATH}, the extension the child loads
 */
public record ReaderEnvironment(String replicaUrl, String logLevel, String logFile, String extensionPath) {

    public static final String LOG_LEVEL_ENV = "LITESTREAM_LOG_LEVEL";
    public static final String LOG_FILE_ENV = "LITESTREAM_LOG_FILE";

    /** Sets and removes the variables in {@code env} (a {@link ProcessBuilder#environment()}). */
    void applyTo(Map<String, String> env) {
        env.put(VfsWatermarkReaderMain.REPLICA_URL_ENV, replicaUrl);
        env.put(LOG_LEVEL_ENV, (logLevel == null || logLevel.isBlank() ? "info" : logLevel.trim()).toUpperCase(Locale.ROOT));
        if (logFile == null || logFile.isBlank()) {
            env.remove(LOG_FILE_ENV);
        } else {
            env.put(LOG_FILE_ENV, logFile);
        }
        env.put(VfsWatermarkReaderMain.EXTENSION_PATH_ENV, extensionPath);
    }
}
