package org.zrm.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.zrm.config.CommandLine;

/**
 * The command line of the OSGi runtime child:
 * {@code java <defaults> <ZRM_JAVA_OPTS> -D... -jar <project>/runtime/target/zrm.jar}.
 */
public final class ChildCommand {

    /**
     * JVM options the runtime gets before {@code ZRM_JAVA_OPTS}, which can override each of them
     * (for the JVM the last occurrence of an option wins, and {@code -Xms} or {@code -Xmx} take
     * precedence over the percentage, {@code -Xmn} over the young generation's cap).
     *
     * <p>{@code InitialRAMPercentage=4}: the JVM's default first heap is 1/64 of the machine's
     * memory, and an initial sync starts by streaming the upstream tables through it. G1 then grows
     * the heap step by step and collects a small young generation over and over. Starting at 4 %
     * (about 1 GB on a 24 GB machine) made the initial sync of the W6 benchmark (1.6 GB) about
     * 1.3× faster (docs/BENCHMARKS.md, session 13). It reserves no more memory than the heap uses;
     * with {@code -Xmx} below it the JVM starts at {@code -Xmx}.
     *
     * <p>{@code MaxNewSize=192m}: almost nothing the runtime allocates survives a young collection
     * (rows in flight, frames, batches; tens of MB), so G1's pauses stay short at any young size
     * and its pause-time sizing grows eden to most of that first heap, about 1 GB. Memory is only
     * faulted in when first written, so every first pass over a larger eden wrote fresh pages: in
     * the W6 initial sync the pass that grew eden to 1 GB took 5.2 s, the same gigabyte of
     * allocation 2.1 s once its pages were in (docs/BENCHMARKS.md, session 25). With the cap the
     * same 200 MB are reused; young collections come more often, in the fan-out benchmark every
     * 3–4 s and 0.3 % of its time. The old generation is not capped: a heap that needs more still
     * grows.
     *
     * <p>The four {@code Tier4…} thresholds, ten times the JVM's own: when the optimizing compiler
     * (C2) takes a method. A start runs a great deal of code a few thousand times and never again
     * (resolving and wiring the bundles, parsing the configuration, Jetty's start, the schema
     * setup), and with the JVM's thresholds C2 compiled much of it: 1.9–2.7 s of C2 CPU in a start
     * to ready of 4.3–5.6 s, on the two cores the start itself needed. With ten times the
     * thresholds C2 spends 0.4–0.5 s of it and the start is 0.5–0.9 s shorter; code that stays
     * hot, the copy of an initial sync or the fan-out's send path, passes the higher thresholds
     * within its first second and is compiled as before (docs/BENCHMARKS.md, session 26). The
     * quick first tier (C1) keeps its thresholds: raising those as well made starts slower again.
     */
    static final List<String> DEFAULT_JVM_OPTIONS = List.of("-XX:InitialRAMPercentage=4", "-XX:MaxNewSize=192m",
            "-XX:Tier4InvocationThreshold=50000", "-XX:Tier4MinInvocationThreshold=6000",
            "-XX:Tier4CompileThreshold=150000", "-XX:Tier4BackEdgeThreshold=400000");

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
        cmd.addAll(DEFAULT_JVM_OPTIONS);
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
