package org.zrm.backup.vfs.internal.process;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.zrm.backup.vfs.internal.reader.VfsWatermarkReaderMain;

/**
 * {@code <java.home>/bin/java <options> -cp <jars> VfsWatermarkReaderMain}: the reader child runs
 * in a JVM of its own with just this bundle, sqlite-jdbc and Jackson on its class path. The class
 * path is resolved on the first start (copying jars may take a moment, so not during activation)
 * and then kept.
 */
final class DefaultReaderCommand implements ReaderCommand {

    /**
     * The child does one small query per probe: a small heap, the serial collector and the C1
     * compiler keep it light on a shared machine. The VFS page cache is native memory, not heap.
     */
    static final List<String> JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m");

    private static final List<Class<?>> ANCHORS = List.of(VfsWatermarkReaderMain.class, org.sqlite.JDBC.class,
            ObjectMapper.class, JsonFactory.class, JsonProperty.class);

    private final Path javaHome;
    private final ReaderClasspath classpath;
    private List<String> command;

    /**
     * @param javaHome the JVM to run ({@code java.home} of this one)
     * @param classpath locates the jars
     */
    DefaultReaderCommand(Path javaHome, ReaderClasspath classpath) {
        this.javaHome = javaHome;
        this.classpath = classpath;
    }

    @Override
    public synchronized void configure(ProcessBuilder builder) throws IOException {
        if (command == null) {
            command = build();
        }
        builder.command(command);
        // The extension is Go code that installs signal handlers; the JVM's own handlers (null
        // checks, safepoints) stay in charge only with its signal-chaining library preloaded.
        Path jsig = javaHome.resolve("lib").resolve("libjsig.so");
        if (Files.isRegularFile(jsig)) {
            String preload = builder.environment().get("LD_PRELOAD");
            builder.environment().put("LD_PRELOAD",
                    preload == null || preload.isBlank() ? jsig.toString() : jsig + ":" + preload);
        }
    }

    private List<String> build() throws IOException {
        List<String> words = new ArrayList<>();
        words.add(javaHome.resolve("bin").resolve("java").toString());
        words.addAll(JVM_OPTIONS);
        words.add("-cp");
        words.add(classpath.resolve(ANCHORS).stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)));
        words.add(VfsWatermarkReaderMain.class.getName());
        return List.copyOf(words);
    }
}
