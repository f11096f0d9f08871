package org.zrm.protocol.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.DataChange;
import org.zrm.protocol.ResetRequired;
import org.zrm.protocol.SchemaChange;
import org.zrm.protocol.subscriber.Ack;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.protocol.subscriber.Frame;
import org.zrm.protocol.subscriber.SnapshotStatus;

/**
 * Decodes every document of the golden corpus, checks its type against the file name
 * ({@code <type>[--variant].json}) and re-encodes it byte for byte. A second test derives the
 * required type names from the sealed hierarchies so that a new message type without a golden
 * document fails the build. {@code src/test/node/verify-golden.mjs} checks the same corpus against
 * the real {@code @rocicorp/zero} package (see the README next to it).
 */
class GoldenCorpusTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    static Stream<Path> changeSourceFiles() {
        return files("change-source").stream();
    }

    static Stream<Path> subscriberFiles() {
        return files("subscriber").stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("changeSourceFiles")
    void changeSourceRoundTrip(Path file) {
        String text = read(file);
        String type = typeOf(file);
        String reEncoded;
        String actualType;
        if (type.startsWith("upstream-")) {
            ChangeSourceUpstream ack = CODEC.decodeChangeSourceUpstream(text);
            actualType = ack.body() instanceof Commit ? "upstream-commit" : "upstream-status";
            reEncoded = CODEC.encode(ack);
        } else if (type.equals("backfill-request")) {
            BackfillRequest req = CODEC.decodeBackfillRequest(text);
            actualType = "backfill-request";
            reEncoded = CODEC.encode(req);
        } else {
            ChangeStreamMessage msg = CODEC.decodeChangeStreamMessage(text);
            actualType = typeKey(msg);
            reEncoded = CODEC.encode(msg);
            // decoding the re-encoded text yields an equal model
            assertEquals(msg, CODEC.decodeChangeStreamMessage(reEncoded));
        }
        assertEquals(type, actualType, "decoded type");
        assertEquals(text, reEncoded);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("subscriberFiles")
    void subscriberRoundTrip(Path file) {
        String text = read(file);
        String type = typeOf(file);
        String reEncoded;
        String actualType;
        if (type.equals("frame")) {
            Frame frame = CODEC.decodeFrame(text);
            CODEC.decodeDownstream(frame.msg()); // the payload must be a valid message
            actualType = "frame";
            reEncoded = CODEC.encode(frame);
        } else if (type.equals("ack")) {
            Ack ack = CODEC.decodeAck(text);
            actualType = "ack";
            reEncoded = CODEC.encode(ack);
        } else if (type.equals("snapshot-status")) {
            SnapshotStatus status = CODEC.decodeSnapshotStatus(text);
            actualType = "snapshot-status";
            reEncoded = CODEC.encode(status);
        } else {
            Downstream msg = CODEC.decodeDownstream(text);
            actualType = typeKey(msg);
            reEncoded = CODEC.encode(msg);
            assertEquals(msg, CODEC.decodeDownstream(reEncoded));
        }
        assertEquals(type, actualType, "decoded type");
        assertEquals(text, reEncoded);
    }

    @Test
    void corpusCoversEveryChangeSourceMessageType() {
        Set<String> required = new TreeSet<>();
        for (Class<?> c : ChangeStreamMessage.class.getPermittedSubclasses()) {
            if (c == ChangeStreamData.class) {
                for (Class<?> d : ChangeStreamData.class.getPermittedSubclasses()) {
                    if (d == ChangeStreamMessage.DataMessage.class) {
                        required.addAll(changeTags());
                    } else {
                        required.add(constant(d, "TYPE"));
                    }
                }
            } else if (c == ChangeStreamMessage.ControlMessage.class) {
                required.add("control-" + ResetRequired.TAG);
            } else {
                required.add(constant(c, "TYPE"));
            }
        }
        required.addAll(List.of("upstream-commit", "upstream-status", "backfill-request"));
        assertCovered("change-source", required);
    }

    @Test
    void corpusCoversEverySubscriberMessageType() {
        Set<String> required = new TreeSet<>();
        for (Class<?> c : Downstream.class.getPermittedSubclasses()) {
            if (c == Downstream.ChangeMessage.class) {
                for (Class<?> d : ChangeStreamData.class.getPermittedSubclasses()) {
                    if (d != ChangeStreamMessage.DataMessage.class) {
                        required.add(constant(d, "TYPE"));
                    }
                }
                required.add("data-insert");
            } else if (c == Downstream.ErrorMessage.class) {
                // type 0 is never sent (upstream quirk); the two fatal types must be covered
                required.add("error-" + ErrorType.WRONG_REPLICA_VERSION.code());
                required.add("error-" + ErrorType.WATERMARK_TOO_OLD.code());
            } else {
                required.add(constant(c, "TYPE"));
            }
        }
        required.addAll(List.of("frame", "ack", "snapshot-status"));
        assertCovered("subscriber", required);
    }

    private static void assertCovered(String dir, Set<String> required) {
        Set<String> present = files(dir).stream().map(GoldenCorpusTest::typeOf).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>(required);
        missing.removeAll(present);
        assertTrue(missing.isEmpty(), "golden documents missing in " + dir + " for " + missing);
        assertTrue(required.size() >= 9, "sanity: enumerated " + required);
    }

    private static List<String> changeTags() {
        List<String> tags = new ArrayList<>();
        for (Class<?> sealed : List.of(DataChange.class, SchemaChange.class)) {
            for (Class<?> c : sealed.getPermittedSubclasses()) {
                tags.add("data-" + constant(c, "TAG"));
            }
        }
        assertEquals(15, tags.size(), "5 data + 10 schema change types");
        return tags;
    }

    static String typeKey(ChangeStreamMessage msg) {
        if (msg instanceof ChangeStreamMessage.DataMessage d) {
            return "data-" + d.change().tag();
        } else if (msg instanceof ChangeStreamMessage.ControlMessage c) {
            return "control-" + c.control().tag();
        }
        return msg.type();
    }

    static String typeKey(Downstream msg) {
        if (msg instanceof Downstream.ChangeMessage c) {
            return typeKey(c.data());
        } else if (msg instanceof Downstream.ErrorMessage e) {
            return "error-" + e.error().type().code();
        }
        return msg.type();
    }

    private static String constant(Class<?> c, String field) {
        try {
            return (String) c.getField(field).get(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(c + " lacks public constant " + field, e);
        }
    }

    static String typeOf(Path file) {
        String name = file.getFileName().toString();
        name = name.substring(0, name.length() - ".json".length());
        int variant = name.indexOf("--");
        return variant < 0 ? name : name.substring(0, variant);
    }

    static List<Path> files(String dir) {
        try {
            Path root = Path.of(GoldenCorpusTest.class.getResource("/golden/" + dir).toURI());
            try (Stream<Path> s = Files.list(root)) {
                List<Path> files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
                assertTrue(!files.isEmpty(), "no golden files in " + dir);
                return files;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The file's text; exactly one trailing newline is tolerated and stripped. */
    static String read(Path file) {
        try {
            String s = Files.readString(file, StandardCharsets.UTF_8);
            return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
