package org.zrm.bench.source;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the change source's time goes: a JFR recording of thread samples (Java and native, every
 * 10 ms) taken while ZRM drains the stream, folded into pipeline stages. A sample is charged to the
 * stage of the innermost frame that belongs to a known component, so for example the
 * {@code String} decoding and map building called by the pgoutput parser count as "parse", and a
 * socket read inside pgjdbc counts as "socket read". JFR samples are not biased to safepoints, which
 * is why it is used rather than {@code Thread.getStackTrace}.
 */
final class StageProfile {

    /** Stages in pipeline order; {@link #classify} maps a stack to one of them. */
    static final List<String> STAGES = List.of(
            "pump: socket read + CopyData framing (pgjdbc)",
            "pump: pgoutput parse (bytes, strings, row maps)",
            "pump: value conversion (types)",
            "pump: ChangeMaker (protocol records, watermarks)",
            "pump: hand-off (Acker, MessageBuffer, lag check)",
            "pump: status updates / acks written",
            "pump: loop / idle park",
            "consumer: poll + ack (StreamDrain)",
            "consumer: JSON encode (ProtocolCodec)",
            "consumer: other");

    private final Recording recording = new Recording();
    private final Map<String, Long> samples = new LinkedHashMap<>();
    private long pumpTotal;
    private long consumerTotal;

    StageProfile() {
        STAGES.forEach(s -> samples.put(s, 0L));
    }

    void start() {
        recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
        recording.enable("jdk.NativeMethodSample").withPeriod(Duration.ofMillis(10));
        recording.start();
    }

    /** Stops the recording and folds its samples in; the recording file is deleted. */
    void stop(Path scratch) throws IOException {
        recording.stop();
        Path file = scratch.resolve("source-profile-" + System.nanoTime() + ".jfr");
        recording.dump(file);
        recording.close();
        try {
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                RecordedThread thread = e.getThread("sampledThread");
                RecordedStackTrace stack = e.getStackTrace();
                if (thread == null || stack == null) {
                    continue;
                }
                String stage = classify(thread.getJavaName(), stack.getFrames());
                if (stage != null) {
                    samples.merge(stage, 1L, Long::sum);
                    if (stage.startsWith("pump")) {
                        pumpTotal++;
                    } else {
                        consumerTotal++;
                    }
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static String classify(String thread, List<RecordedFrame> frames) {
        if (thread == null) {
            return null;
        }
        boolean pump = thread.startsWith("zrm-pg-replication-");
        boolean consumer = thread.equals("zrm-source-drain");
        if (!pump && !consumer) {
            return null;
        }
        for (RecordedFrame f : frames) {
            if (f.getMethod() == null || f.getMethod().getType() == null) {
                continue;
            }
            String cls = f.getMethod().getType().getName();
            String method = f.getMethod().getName();
            if (consumer) {
                if (cls.startsWith("org.zrm.protocol.json")) {
                    return STAGES.get(8);
                }
                if (cls.startsWith("org.zrm.bench.source") || cls.endsWith("StreamDrain")) {
                    return STAGES.get(7);
                }
                continue;
            }
            if (cls.startsWith("org.zrm.changesource.pg.internal.types")) {
                return STAGES.get(2);
            }
            if (cls.endsWith("PgOutputParser")) {
                return STAGES.get(1);
            }
            if (cls.endsWith("ChangeMaker")) {
                return STAGES.get(3);
            }
            if (cls.endsWith("Acker") || cls.endsWith("MessageBuffer") || cls.endsWith("PgChangeStream")
                    || cls.endsWith("LagReporter")) {
                return STAGES.get(4);
            }
            if (cls.endsWith("ReplicationStream")) {
                if (method.equals("sendStatus") || method.equals("sendStatusIfDue")) {
                    return STAGES.get(5);
                }
                if (method.equals("runPump") || method.equals("pumpLoop") || method.equals("parkNanos")) {
                    // Reached only when no inner known frame matched: the read call is in pgjdbc below.
                    return STAGES.get(6);
                }
                continue;
            }
            if (cls.startsWith("org.postgresql")) {
                return STAGES.get(0);
            }
            if (cls.equals("java.util.concurrent.locks.LockSupport")) {
                return STAGES.get(6);
            }
        }
        return consumer ? STAGES.get(9) : STAGES.get(6);
    }

    private double percent(String stage, long n) {
        long total = stage.startsWith("pump") ? pumpTotal : consumerTotal;
        return total == 0 ? 0 : 100.0 * n / total;
    }

    /** @return stage → percentage of its thread's samples (pump or consumer), plus the sample counts */
    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("pumpSamples", pumpTotal);
        json.put("consumerSamples", consumerTotal);
        samples.forEach((stage, n) -> json.put(stage, Math.round(10 * percent(stage, n)) / 10.0));
        return json;
    }

    /** The profile as indented lines, percentages of the stage's thread. */
    String describe() {
        StringBuilder b = new StringBuilder();
        samples.forEach((stage, n) -> b.append(String.format(java.util.Locale.ROOT, "      %5.1f%%  %s%n",
                percent(stage, n), stage)));
        return b.append("      (").append(pumpTotal).append(" pump and ").append(consumerTotal)
                .append(" consumer samples; percentages are of the stage's own thread)").toString();
    }
}
