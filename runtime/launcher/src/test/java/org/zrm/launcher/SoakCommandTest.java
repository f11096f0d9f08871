package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SoakCommandTest {

    @TempDir
    Path project;

    private SoakCommand soak() {
        return new SoakCommand(new FolderResolver(Map.of("ZRM_HOME", project.toString()),
                project.resolve("runtime/launcher/target/zrm-launcher.jar"), project), Map.of());
    }

    @Test
    void runsTheSoakThroughMavenWithItsSettings() {
        List<String> defaults = soak().command(List.of());
        assertTrue(defaults.contains("-Dtest=SoakRun"), defaults.toString());
        assertTrue(defaults.contains("-Dzrm.test.redirectOutput=false"), "the minute lines are printed live");
        assertTrue(defaults.contains("-Dzrm.soak.minutes=30"), defaults.toString());
        assertTrue(defaults.contains("-Dzrm.soak.faultEveryMinutes=3.0"), defaults.toString());

        List<String> set = soak().command(List.of("--minutes", "5", "--fault-every", "0.5", "--seed", "42"));
        assertTrue(set.containsAll(List.of("-Dzrm.soak.minutes=5", "-Dzrm.soak.faultEveryMinutes=0.5",
                "-Dzrm.soak.seed=42")), set.toString());
    }

    @Test
    void badOptionsAreOneLineErrors() {
        assertEquals("zrm soak: --minutes takes a number, got 'ten'",
                assertThrows(LaunchException.class, () -> soak().command(List.of("--minutes", "ten"))).getMessage());
        assertEquals("zrm soak: --minutes must be at least 1, got 0",
                assertThrows(LaunchException.class, () -> soak().command(List.of("--minutes", "0"))).getMessage());
        assertTrue(assertThrows(LaunchException.class, () -> soak().command(List.of("--fast"))).getMessage()
                .startsWith("zrm soak: unknown or incomplete option '--fast'"));
        assertTrue(assertThrows(LaunchException.class, () -> soak().command(List.of("--minutes"))).getMessage()
                .startsWith("zrm soak: unknown or incomplete option '--minutes'"));
        assertEquals("zrm soak: --fault-every must be a positive number of minutes, got -1.0",
                assertThrows(LaunchException.class, () -> soak().command(List.of("--fault-every", "-1"))).getMessage());
    }
}
