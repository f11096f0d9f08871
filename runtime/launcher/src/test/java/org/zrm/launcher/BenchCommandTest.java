package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {

    @TempDir
    Path project;

    @Test
    void runsTheBenchmarkJarWithTheArguments() throws Exception {
        Path jar = project.resolve("runtime/bench/target/zrm-bench.jar");
        Files.createDirectories(jar.getParent());
        Files.writeString(jar, "");
        BenchCommand bench = new BenchCommand(resolver(), Path.of("/jdk/bin/java"), Map.of());
        assertEquals(List.of("/jdk/bin/java", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch", "-jar", jar.toString(), "source-W1", "--scale", "0.1"),
                bench.command(List.of("source-W1", "--scale", "0.1")));
    }

    @Test
    void missingJarSaysHowToBuildIt() {
        BenchCommand bench = new BenchCommand(resolver(), Path.of("java"), Map.of());
        LaunchException e = assertThrows(LaunchException.class, () -> bench.command(List.of("source-W1")));
        assertTrue(e.getMessage().contains("mvn -B -ntp install -DskipTests"), e.getMessage());
    }

    private FolderResolver resolver() {
        return new FolderResolver(Map.of("ZRM_HOME", project.toString()), project.resolve("runtime/launcher/target/zrm-launcher.jar"), project);
    }
}
