package org.zrm.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.zrm.config.CommandLine;

/**
 * The command line of the OSGi runtime child:
 * {@code java <ZRM_JAVA_OPTS> -D... -jar <project>/runtime/target/zrm.jar}.
 */
public final class ChildCommand {
    private final Path javaBinary;
    private final boolean hasConsole;

    /**
     * @param javaBinary the {@code java} to run (the launcher's own)
     * @param hasConsole whether a terminal is attached; without one the Gogo shell must not read stdin
     */
    public ChildCommand(Path javaBinary, boolean hasConsole) {
        this.javaBinary = javaBinary;
        this.hasConsole = hasConsole;
    }

    /**
     * @param folders the launch folders
     * @param javaOptions extra JVM options, before the launcher's own system properties
     * @param httpPort the change-streamer port ({@code ZERO_CHANGE_STREAMER_PORT})
     */
    public List<String> build(LaunchFolders folders, List<String> javaOptions, int httpPort) {
        return build(folders, javaOptions, httpPort, "");
    }

    /**
     * @param bindAddress the address the HTTP port binds to ({@code ZRM_BIND_ADDRESS}); empty for
     *     every interface, as zero-cache listens
     */
    public List<String> build(LaunchFolders folders, List<String> javaOptions, int httpPort, String bindAddress) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBinary.toString());
        cmd.addAll(javaOptions);
        cmd.add("-Dfelix.fileinstall.dir=" + folders.config());
        cmd.add("-Dzrm.config.dir=" + folders.config());
        cmd.add("-Dzrm.deploy.dir=" + folders.deploy());
        cmd.add("-Dzrm.state.dir=" + folders.state());
        cmd.add("-Dorg.osgi.service.http.port=" + httpPort);
        if (bindAddress != null && !bindAddress.isBlank()) {
            cmd.add("-Dorg.apache.felix.http.host=" + bindAddress.strip());
        }
        cmd.add("-Dlogback.configurationFile=" + folders.logbackConfig());
        cmd.add("-Djava.util.logging.config.file=" + folders.julConfig());
        if (!hasConsole) {
            cmd.add("-Dgosh.args=--nointeractive");
        }
        cmd.add("-jar");
        cmd.add(folders.runtimeJar().toString());
        return cmd;
    }

    /**
     * Splits {@code ZRM_JAVA_OPTS} like a shell would for simple cases: on whitespace, with single
     * or double quotes grouping (so {@code -Dx="a b"} stays one option).
     *
     * @throws LaunchException on an unterminated quote
     */
    public static List<String> splitOptions(String text) {
        try {
            return CommandLine.split(text);
        } catch (IllegalArgumentException e) {
            throw new LaunchException(EnvRegistry.ZRM_JAVA_OPTS + ": " + e.getMessage(), e);
        }
    }

}
