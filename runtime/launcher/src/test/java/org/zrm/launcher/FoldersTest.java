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

class FoldersTest {
    @TempDir
    Path tmp;

    @Test
    void defaultsLiveInTheProjectFoundAboveTheJar() throws Exception {
        Path project = tmp.resolve("zrm");
        Files.createDirectories(project.resolve("bundles"));
        Path jar = project.resolve("runtime/launcher/target/zrm-launcher.jar");
        Files.createDirectories(jar.getParent());
        LaunchFolders f = new FolderResolver(Map.of(), jar, tmp).resolve();
        assertEquals(project, f.project());
        assertEquals(project.resolve("conf"), f.config());
        assertEquals(project.resolve("deploy"), f.deploy());
        assertEquals(project.resolve("run"), f.state());
        assertTrue(Files.isDirectory(f.config()) && Files.isDirectory(f.deploy()) && Files.isDirectory(f.state()), "created");
        assertEquals(project.resolve("runtime/target/zrm.jar"), f.runtimeJar());
        assertEquals(project.resolve("run/pgdata"), f.embeddedPgData());
    }

    @Test
    void environmentOverridesEachFolderRelativeToTheWorkingFolder() {
        LaunchFolders f = new FolderResolver(Map.of("ZRM_HOME", tmp.resolve("home").toString(),
                "ZRM_CONFIG_DIR", "cfg", "ZRM_DEPLOY_DIR", tmp.resolve("dep").toString(), "ZRM_STATE_DIR", "st/../state"),
                Path.of("/nowhere/zrm-launcher.jar"), tmp.resolve("cwd")).resolve();
        assertEquals(tmp.resolve("home"), f.project());
        assertEquals(tmp.resolve("cwd/cfg"), f.config());
        assertEquals(tmp.resolve("dep"), f.deploy());
        assertEquals(tmp.resolve("cwd/state"), f.state());
    }

    @Test
    void aLauncherOutsideAProjectNeedsZrmHome() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> new FolderResolver(Map.of(), tmp.resolve("x.jar"), tmp).resolve());
        assertTrue(e.getMessage().contains("set ZRM_HOME"), e.getMessage());
    }

    @Test
    void anEmptyConfigFolderIsSeededWithTheShippedCfgFilesOnly() throws Exception {
        Path shipped = Files.createDirectories(tmp.resolve("runtime/conf"));
        Files.writeString(shipped.resolve("org.zrm.a.cfg"), "upstreamDb = $[env:ZERO_UPSTREAM_DB]\n");
        Files.writeString(shipped.resolve("org.zrm.b.cfg"), "x = 1\n");
        Files.writeString(shipped.resolve("logback.xml"), "<configuration/>");
        Path config = Files.createDirectories(tmp.resolve("conf"));

        List<Path> copied = new ConfigSeeder().seed(shipped, config);
        assertEquals(List.of(config.resolve("org.zrm.a.cfg"), config.resolve("org.zrm.b.cfg")), copied);
        assertEquals("upstreamDb = $[env:ZERO_UPSTREAM_DB]\n", Files.readString(config.resolve("org.zrm.a.cfg")));

        // The operator's folder is left alone afterwards: a deleted default stays deleted.
        Files.delete(config.resolve("org.zrm.b.cfg"));
        assertEquals(List.of(), new ConfigSeeder().seed(shipped, config));
        assertTrue(Files.notExists(config.resolve("org.zrm.b.cfg")));
        assertEquals(List.of(), new ConfigSeeder().seed(tmp.resolve("absent"), Files.createDirectories(tmp.resolve("c2"))));
    }

    @Test
    void anOlderOperatorFolderGetsTheRequiredIdentityFileAndNothingElse() throws Exception {
        Path shipped = Files.createDirectories(tmp.resolve("runtime/conf"));
        Files.writeString(shipped.resolve("org.zrm.identity.cfg"), "app.id = $[env:ZERO_APP_ID;default=zero]\n");
        Files.writeString(shipped.resolve("org.zrm.b.cfg"), "x = 1\n");
        Path config = Files.createDirectories(tmp.resolve("conf"));
        Files.writeString(config.resolve("org.zrm.storer.cfg"), "app.id = mine\n");

        assertEquals(List.of(config.resolve("org.zrm.identity.cfg")), new ConfigSeeder().seed(shipped, config));
        assertTrue(Files.notExists(config.resolve("org.zrm.b.cfg")), "other new defaults stay out of the operator's folder");
        Files.writeString(config.resolve("org.zrm.identity.cfg"), "app.id = edited\n");
        assertEquals(List.of(), new ConfigSeeder().seed(shipped, config));
        assertEquals("app.id = edited\n", Files.readString(config.resolve("org.zrm.identity.cfg")), "never overwritten");
    }
}
