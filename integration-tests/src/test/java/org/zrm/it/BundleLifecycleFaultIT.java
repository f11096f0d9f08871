package org.zrm.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;

/**
 * The fault suite's bundle step (issue 16), in the shipped runtime inside Felix: under the suite's
 * write load ({@link FaultLoad}) and with its two reconnecting subscribers ({@link FaultSubscriber}),
 * every pipeline bundle in turn is updated ({@code Bundle.update}) and then stopped and started.
 * After each step the pipeline must carry a transaction begun after it to the change log, to both
 * subscribers and to the replica; at the end the suite's invariant ({@link FaultInvariant}) is
 * checked over the whole history: every committed transaction stored once and in order, the replica
 * equal to upstream, each subscriber given each transaction exactly once across its reconnects.
 *
 * <p>Each step's row (recovery time, subscriber reconnects) goes to
 * {@code target/bundle-lifecycle.md}; the whole run adds one row to {@code target/fault-suite.md}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class BundleLifecycleFaultIT {

    /** In pipeline order; the backup monitors last (the replica monitor is the active one). */
    static final List<String> BUNDLES = List.of("org.zrm.changesource.pg", "org.zrm.storer", "org.zrm.changestreamer",
            "org.zrm.changestreamer.http", "org.zrm.replicator", "org.zrm.backup.replica", "org.zrm.backup.litestream3",
            "org.zrm.backup.vfs");

    private static final Duration STEP_BOUND = Duration.ofSeconds(90);

    @Inject
    protected BundleContext context;

    @Configuration
    public Option[] config() throws IOException {
        return ZrmRuntimeOptions.streamingOptions(Files.createTempDirectory("zrm-it-lifecycle-"),
                FaultLoad.SCHEMA.split(";"));
    }

    private record Step(String bundle, String action, Duration recovery, int reconnects) {
    }

    @Test
    public void everyPipelineBundleUpdatedThenStoppedAndStartedUnderLoadLosesAndDuplicatesNothing() throws Exception {
        Pipeline pipeline = new Pipeline(context);
        String replicaVersion = pipeline.awaitStreaming();
        int port = Integer.parseInt(pipeline.port());
        FaultInvariant.Db upstream = pipeline::upstream;
        List<FaultSubscriber> subscribers = new ArrayList<>();
        List<Step> steps = new ArrayList<>();
        FaultLoad load = null;
        try {
            subscribers.add(new FaultSubscriber("lifecycle-from-start", port, replicaVersion, replicaVersion, 0));
            load = new FaultLoad(upstream);
            load.awaitProgress(50);
            String joinAt = FaultInvariant.lastCommitWatermark(upstream, replicaVersion);
            subscribers.add(new FaultSubscriber("lifecycle-mid-load", port, replicaVersion, joinAt,
                    FaultInvariant.seqAt(upstream, joinAt)));
            load.awaitProgress(50);
            FaultLoad running = load;
            for (String bsn : BUNDLES) {
                Bundle bundle = Bundles.named(context, bsn);
                steps.add(step(pipeline, load, subscribers, replicaVersion, bsn, "update", () -> bundle.update()));
                steps.add(step(pipeline, load, subscribers, replicaVersion, bsn, "stop, then start", () -> {
                    bundle.stop();
                    // Stopped while the load runs: what is committed meanwhile must still arrive.
                    running.awaitProgress(20);
                    bundle.start();
                }));
            }
            load.close();
            List<String> problems = FaultInvariant.awaitCaughtUp(upstream, upstream, subscribers, replicaVersion,
                    STEP_BOUND);
            FaultInvariant.Outcome o = FaultInvariant.check(upstream, upstream, pipeline::replica, load.acked(), subscribers);
            problems.addAll(o.problems());
            writeSteps(steps);
            int reconnects = subscribers.stream().mapToInt(FaultSubscriber::reconnects).sum();
            FaultRun.appendRow("| update, then stop and start, of each of " + BUNDLES.size() + " pipeline bundles in turn"
                    + " (Pax Exam, in Felix) | " + o.committed() + " | " + o.lost() + " | " + o.duplicated() + " | see"
                    + " docs/RELIABILITY.md | " + reconnects + " in all | " + (problems.isEmpty() ? "ok" : "FAILED") + " |");
            assertTrue(String.join("\n", problems), problems.isEmpty());
            assertEquals(0, o.lost());
            assertEquals(0, o.duplicated());
        } finally {
            for (FaultSubscriber s : subscribers) {
                s.close();
            }
            if (load != null) {
                load.close();
            }
        }
    }

    @FunctionalInterface
    private interface Action {
        void run() throws BundleException, InterruptedException;
    }

    /**
     * Runs one action on one bundle, then waits (bounded) until a transaction committed after it is
     * in the change log, at both subscribers and in the replica.
     */
    private Step step(Pipeline pipeline, FaultLoad load, List<FaultSubscriber> subscribers, String replicaVersion,
            String bsn, String action, Action a) throws Exception {
        int reconnectsBefore = subscribers.stream().mapToInt(FaultSubscriber::reconnects).sum();
        a.run();
        Bundle b = Bundles.named(context, bsn);
        assertEquals(bsn + " after " + action, Bundle.ACTIVE, b.getState());
        long ended = System.nanoTime();
        long firstAfter = load.attempted() + 1;
        load.awaitProgress(10);
        long deadline = ended + STEP_BOUND.toNanos();
        FaultInvariant.Db upstream = pipeline::upstream;
        while (FaultInvariant.maxLoggedSeq(upstream) < firstAfter) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("after the " + action + " of " + bsn + ": nothing stored within " + STEP_BOUND
                        + "; status " + pipeline.status());
            }
            TimeUnit.MILLISECONDS.sleep(50); // the storer signals nothing a test can wait on
        }
        String watermark = FaultInvariant.lastCommitWatermark(upstream, replicaVersion);
        for (FaultSubscriber s : subscribers) {
            s.awaitWatermark(watermark, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        }
        pipeline.awaitReplicaAt(watermark);
        Duration recovery = Duration.ofNanos(System.nanoTime() - ended);
        int reconnects = subscribers.stream().mapToInt(FaultSubscriber::reconnects).sum() - reconnectsBefore;
        System.out.println("BundleLifecycle: " + bsn + " " + action + ": recovered in " + recovery.toMillis()
                + " ms, subscriber reconnects " + reconnects);
        return new Step(bsn, action, recovery, reconnects);
    }

    private static void writeSteps(List<Step> steps) throws IOException {
        StringBuilder b = new StringBuilder("| bundle | action | recovery | subscribers |\n|---|---|---|---|\n");
        for (Step s : steps) {
            b.append("| `").append(s.bundle()).append("` | ").append(s.action()).append(" | ")
                    .append(String.format("%.1f s", s.recovery().toMillis() / 1000.0)).append(" | ")
                    .append(s.reconnects() == 0 ? "stay connected" : "reconnect (" + s.reconnects() + ")").append(" |\n");
        }
        Path file = Path.of(System.getProperty("zrm.it.target", "target")).resolve("bundle-lifecycle.md");
        Files.createDirectories(file.getParent());
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    }

}
