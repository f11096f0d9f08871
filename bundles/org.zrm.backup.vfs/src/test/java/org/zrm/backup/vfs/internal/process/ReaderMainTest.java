package org.zrm.backup.vfs.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.backup.vfs.internal.reader.VfsWatermarkReaderMain;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;

/**
 * The real reader child, started by the default command ({@code java -cp <module classes,
 * sqlite-jdbc, Jackson> VfsWatermarkReaderMain}). Without the real extension (spec §8.4) a read
 * can only fail, which shows the child's protocol: ready before the reader is built, failures as
 * error responses that name the cause, the child kept afterwards.
 */
class ReaderMainTest {

    /** A JVM starts in well under a second, but the machine is shared. */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final List<Process> started = new CopyOnWriteArrayList<>();
    private final List<ChildProcessWatermarkSource> sources = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeAll() {
        sources.forEach(ChildProcessWatermarkSource::close);
    }

    private ChildProcessWatermarkSource source(ReaderEnvironment environment) {
        DefaultReaderCommand command = new DefaultReaderCommand(Path.of(System.getProperty("java.home")),
                new ReaderClasspath(null));
        ReaderLauncher launcher = new ReaderLauncher(command, environment, builder -> {
            Process p = builder.start();
            started.add(p);
            return p;
        }, ReaderProcess.MAX_LINE_BYTES);
        ChildProcessWatermarkSource source = new ChildProcessWatermarkSource(launcher, TIMEOUT, Duration.ofSeconds(10));
        sources.add(source);
        return source;
    }

    @Test
    void defaultCommandRunsTheReaderMainInAJvmOfItsOwn() throws IOException {
        ProcessBuilder builder = new ProcessBuilder();
        new DefaultReaderCommand(Path.of(System.getProperty("java.home")), new ReaderClasspath(null)).configure(builder);

        List<String> command = builder.command();
        assertEquals(Path.of(System.getProperty("java.home"), "bin", "java").toString(), command.get(0));
        assertEquals(VfsWatermarkReaderMain.class.getName(), command.get(command.size() - 1));
        String classpath = command.get(command.indexOf("-cp") + 1);
        assertEquals(5, classpath.split(java.io.File.pathSeparator).length, classpath);
        Path jsig = Path.of(System.getProperty("java.home"), "lib", "libjsig.so");
        if (Files.exists(jsig)) {
            assertTrue(builder.environment().get("LD_PRELOAD").startsWith(jsig.toString()));
        }
    }

    @Test
    void reportsAMissingExtensionByPathAndKeepsTheChild() {
        Path missing = dir.resolve("litestream-vfs.so");
        ChildProcessWatermarkSource source = source(
                new ReaderEnvironment("s3://bucket/db", "warn", "", missing.toString()));

        String message = assertThrows(IOException.class, source::readWatermark).getMessage();
        assertEquals(missing + ": litestream VFS extension not found (litestream.vfsExtensionPath)", message);
        assertThrows(IOException.class, source::readWatermark, "a reader that failed to build is tried again");
        assertEquals(1, started.size(), "error responses keep the child");

        source.close();
        assertFalse(started.get(0).isAlive());
    }

    @Test
    void reportsAnExtensionSqliteCannotLoad() throws IOException {
        Path notALibrary = Files.writeString(dir.resolve("litestream-vfs.so"), "not a shared library");
        ChildProcessWatermarkSource source = source(
                new ReaderEnvironment("s3://bucket/db", "warn", "", notALibrary.toString()));

        String message = assertThrows(IOException.class, source::readWatermark).getMessage();
        assertTrue(message.startsWith("cannot load litestream VFS extension " + notALibrary + ": "), message);
    }

    @Test
    void reportsAMissingReplicaUrl() {
        ChildProcessWatermarkSource source = source(new ReaderEnvironment("", "warn", "", "/opt/litestream-vfs.so"));

        assertEquals("Missing LITESTREAM_REPLICA_URL (litestream.backupURL) for backup watermark reader",
                assertThrows(IOException.class, source::readWatermark).getMessage());
    }

    /**
     * Only where the real extension and a litestream v0.5 backup exist (spec §8.3): set
     * {@code ZERO_LITESTREAM_VFS_EXTENSION_PATH} and {@code ZERO_LITESTREAM_BACKUP_URL} (plus any
     * {@code AWS_*} credentials, which the child inherits).
     */
    @Test
    @EnabledIfEnvironmentVariable(named = "ZERO_LITESTREAM_VFS_EXTENSION_PATH", matches = ".+")
    @EnabledIfEnvironmentVariable(named = "ZERO_LITESTREAM_BACKUP_URL", matches = ".+")
    void readsARealBackupThroughTheExtension() throws Exception {
        ChildProcessWatermarkSource source = source(new ReaderEnvironment(System.getenv("ZERO_LITESTREAM_BACKUP_URL"),
                "info", "", System.getenv("ZERO_LITESTREAM_VFS_EXTENSION_PATH")));
        long before = System.currentTimeMillis();

        BackupWatermark read = source.readWatermark();

        assertFalse(read.watermark().isEmpty());
        assertTrue(read.txid().matches("[0-9a-f]{16}"), read.txid());
        assertTrue(read.observedAtMs() >= before, "stamped by the child when it read");
    }
}
