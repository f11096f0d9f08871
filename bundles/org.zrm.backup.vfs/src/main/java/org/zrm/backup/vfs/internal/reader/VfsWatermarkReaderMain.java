package org.zrm.backup.vfs.internal.reader;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.zrm.backup.vfs.internal.watermark.WireCodec;

/**
 * Entry point of the backup watermark reader child process (upstream
 * {@code server/backup-watermark-reader.ts}), started by the monitor with
 * {@code java -cp <this bundle, sqlite-jdbc, jackson> <this class>} and spoken to in JSON lines
 * on stdin/stdout ({@link WireCodec}).
 *
 * <p>Configuration comes only from the environment the parent sets:
 * {@value #REPLICA_URL_ENV}, {@code LITESTREAM_LOG_LEVEL}, {@code LITESTREAM_LOG_FILE} (read by the
 * extension itself) and {@value #EXTENSION_PATH_ENV}. Missing values are reported as error
 * responses, never before {@code ready}.
 *
 * <p>Stdout is the protocol channel: {@code System.out} is pointed at stderr so that nothing else
 * in this JVM writes to it. The native extension still logs to the real stdout when
 * {@code LITESTREAM_LOG_FILE} is unset; the parent logs such non-protocol lines and ignores them.
 * Exits with status 0 when stdin ends.
 */
public final class VfsWatermarkReaderMain {

    /** The replica URL, as built by {@link ReplicaUrl#build}. Read by the extension. */
    public static final String REPLICA_URL_ENV = "LITESTREAM_REPLICA_URL";
    /** The extension to load, zero-cache's {@code --litestream-vfs-extension-path}. */
    public static final String EXTENSION_PATH_ENV = "ZERO_LITESTREAM_VFS_EXTENSION_PATH";

    private VfsWatermarkReaderMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        Map<String, String> env = System.getenv();
        ReaderService service = new ReaderService(new WireCodec(), protocol, () -> openReader(env), System.err);
        service.run(System.in);
        System.exit(0); // the worker thread may still be stuck in native code
    }

    private static VfsWatermarkReader openReader(Map<String, String> env) throws Exception {
        String replicaUrl = env.get(REPLICA_URL_ENV);
        if (replicaUrl == null || replicaUrl.isEmpty()) {
            throw new IllegalStateException("Missing " + REPLICA_URL_ENV + " (litestream.backupURL) for backup watermark reader");
        }
        String extension = env.get(EXTENSION_PATH_ENV);
        if (extension == null || extension.isEmpty()) {
            throw new IllegalStateException("Missing " + EXTENSION_PATH_ENV
                    + " (litestream.vfsExtensionPath) for backup watermark reader");
        }
        return VfsWatermarkReader.open(Path.of(extension), VfsWatermarkReader.DATABASE_URI, Clock.systemUTC());
    }
}
