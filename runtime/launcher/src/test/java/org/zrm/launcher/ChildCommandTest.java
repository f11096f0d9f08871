package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

class ChildCommandTest {
    private final LaunchFolders folders = new LaunchFolders(Path.of("/p"), Path.of("/p/conf"), Path.of("/p/deploy"), Path.of("/p/run"));

    @Test
    void buildsTheRuntimeCommandLine() {
        List<String> cmd = new ChildCommand(Path.of("/jdk/bin/java"), false).build(folders, List.of("-Xmx1g", "-Da=b c"), 4849);
        assertEquals(List.of("/jdk/bin/java", "-XX:InitialRAMPercentage=4", "-XX:MaxNewSize=192m",
                "-XX:Tier4InvocationThreshold=50000", "-XX:Tier4MinInvocationThreshold=6000",
                "-XX:Tier4CompileThreshold=150000", "-XX:Tier4BackEdgeThreshold=400000", "-Xmx1g", "-Da=b c",
                "-Dfelix.fileinstall.dir=/p/conf", "-Dzrm.config.dir=/p/conf", "-Dzrm.deploy.dir=/p/deploy",
                "-Dzrm.state.dir=/p/run", "-Dorg.osgi.service.http.port=4849",
                "-Dlogback.configurationFile=/p/runtime/conf/logback.xml",
                "-Djava.util.logging.config.file=/p/runtime/conf/jul.properties", "-Dgosh.args=--nointeractive",
                "-jar", "/p/runtime/target/zrm.jar"), cmd);
    }

    @Test
    void keepsTheInteractiveShellWithAConsole() {
        List<String> cmd = new ChildCommand(Path.of("java"), true).build(folders, List.of(), 5001);
        assertEquals(false, cmd.contains("-Dgosh.args=--nointeractive"));
        assertEquals(true, cmd.contains("-Dorg.osgi.service.http.port=5001"));
    }

    @Test
    void splitsJavaOptionsLikeAShell() {
        assertEquals(List.of(), ChildCommand.splitOptions(null));
        assertEquals(List.of(), ChildCommand.splitOptions("   "));
        assertEquals(List.of("-Xmx2g", "-Dx=a b", "-Dy=it's", "-Dz="),
                ChildCommand.splitOptions(" -Xmx2g  -Dx=\"a b\" -Dy=\"it's\" -Dz=''"));
        LaunchException e = assertThrows(LaunchException.class, () -> ChildCommand.splitOptions("-Dx='open"));
        assertEquals("ZRM_JAVA_OPTS: unterminated ' quote in command line: -Dx='open", e.getMessage());
    }

    @Test
    void aBindAddressIsPassedToJettyAndNoneMeansEveryInterface() {
        List<String> bound = new ChildCommand(Path.of("java"), false).build(folders, List.of(), 4849, " 127.0.0.1 ");
        assertTrue(bound.contains("-Dorg.apache.felix.http.host=127.0.0.1"), bound.toString());
        List<String> open = new ChildCommand(Path.of("java"), false).build(folders, List.of(), 4849, "");
        assertTrue(open.stream().noneMatch(a -> a.startsWith("-Dorg.apache.felix.http.host")), open.toString());
    }
}
