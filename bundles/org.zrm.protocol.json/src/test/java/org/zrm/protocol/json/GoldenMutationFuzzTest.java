package org.zrm.protocol.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes every decoder of the codec with mutated golden documents (issue #16, fuzzed inputs). The
 * property: a decoder either returns a model that re-encodes to a stable text, or throws a
 * {@link ProtocolException} with a path and a reason; never another exception, never a call
 * longer than the deadline, and never an allocation out of proportion to the input.
 *
 * <p>The normal build runs a few thousand inputs; {@code -Dzrm.fuzz.scale=N} multiplies them
 * (docs/RELIABILITY.md). A failing input is printed by jqwik with its seed; keep it as an
 * {@link Example} below when fixing what it found.
 */
@AddLifecycleHook(FuzzTries.class)
class GoldenMutationFuzzTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();
    private static final Duration DEADLINE = Duration.ofSeconds(5);
    /** Per input char, on top of a fixed allowance for parser buffers. */
    private static final long ALLOC_PER_CHAR = 64;
    private static final long ALLOC_FIXED = 16L << 20;
    private static final Bounded BOUNDED = new Bounded(DEADLINE);

    /** A decoder, and the encoder of what it returns. */
    private record Codec(String name, Function<String, Object> decode, Function<Object, String> encode) {}

    private static final List<Codec> CODECS = List.of(
            new Codec("changeStreamMessage", CODEC::decodeChangeStreamMessage,
                    m -> CODEC.encode((org.zrm.protocol.ChangeStreamMessage) m)),
            new Codec("changeStreamMessage(utf8)", s -> CODEC.decodeChangeStreamMessage(s.getBytes(StandardCharsets.UTF_8)),
                    m -> CODEC.encode((org.zrm.protocol.ChangeStreamMessage) m)),
            new Codec("change", CODEC::decodeChange, m -> CODEC.encodeChange((org.zrm.protocol.Change) m)),
            new Codec("changeSourceUpstream", CODEC::decodeChangeSourceUpstream,
                    m -> CODEC.encode((org.zrm.protocol.ChangeSourceUpstream) m)),
            new Codec("backfillRequest", CODEC::decodeBackfillRequest,
                    m -> CODEC.encode((org.zrm.protocol.BackfillRequest) m)),
            new Codec("downstream", CODEC::decodeDownstream,
                    m -> CODEC.encode((org.zrm.protocol.subscriber.Downstream) m)),
            new Codec("snapshotStatus", CODEC::decodeSnapshotStatus,
                    m -> CODEC.encode((org.zrm.protocol.subscriber.SnapshotStatus) m)),
            new Codec("frame", CODEC::decodeFrame, m -> CODEC.encode((org.zrm.protocol.subscriber.Frame) m)),
            new Codec("ack", CODEC::decodeAck, m -> CODEC.encode((org.zrm.protocol.subscriber.Ack) m)),
            new Codec("value", CODEC::decodeValue, CODEC::encodeValue),
            new Codec("valueLikeJsonParse", CODEC::decodeValueLikeJsonParse, CODEC::encodeValue));

    private static final List<String> GOLDEN = golden();

    @AfterContainer
    static void stopWorker() {
        BOUNDED.close();
    }

    @Provide
    Arbitrary<String> goldenDocuments() {
        return Arbitraries.of(GOLDEN);
    }

    @Property(tries = 2500)
    void mutatedGoldenDocumentsDecodeOrFailTyped(@ForAll("goldenDocuments") String doc, @ForAll long seed,
            @ForAll @IntRange(min = 1, max = 6) int mutations) {
        checkAllDecoders(JsonMutator.mutate(doc, seed, mutations));
    }

    @Property(tries = 500)
    void arbitraryTextDecodesOrFailsTyped(@ForAll String text) {
        checkAllDecoders(text);
    }

    @Example
    void corpusIsLoaded() {
        assertTrue(GOLDEN.size() > 40, "golden corpus found: " + GOLDEN.size());
    }

    static void checkAllDecoders(String input) {
        for (Codec codec : CODECS) {
            Bounded.Outcome<String> out = BOUNDED.call(() -> {
                Object model = codec.decode().apply(input);
                return codec.encode().apply(model);
            });
            long bound = ALLOC_FIXED + ALLOC_PER_CHAR * input.length();
            assertTrue(out.allocatedBytes() <= bound, () -> codec.name() + " allocated " + out.allocatedBytes()
                    + " bytes for " + input.length() + " chars (bound " + bound + ")");
            if (out.thrown() != null) {
                if (!(out.thrown() instanceof ProtocolException e)) {
                    throw new AssertionError(codec.name() + " threw " + out.thrown() + " for " + abbreviate(input),
                            out.thrown());
                }
                assertNotNull(e.path(), "path");
                assertTrue(e.reason() != null && !e.reason().isBlank(), "reason");
                continue;
            }
            // What decodes must re-encode, and that text must decode to the same text again.
            String once = out.value();
            if (codec.name().endsWith("(utf8)") && hasLoneSurrogate(once)) {
                // The encoder writes a lone surrogate raw, as JavaScript does; turning that text into
                // UTF-8 (here, for the byte decoder) replaces it, so the text cannot be stable.
                continue;
            }
            Bounded.Outcome<String> again = BOUNDED.call(() -> codec.encode().apply(codec.decode().apply(once)));
            if (again.thrown() instanceof ProtocolException e
                    && (isKnownSurrogateNameLimit(e) || isNonFiniteNumber(e, input)
                            || isUnsafeFractionBecomingBigint(e, input))) {
                continue;
            }
            if (again.thrown() != null) {
                throw new AssertionError(codec.name() + ": re-encoded text of " + abbreviate(input)
                        + " does not decode: " + abbreviate(once), again.thrown());
            }
            if (!once.equals(again.value())) {
                int d = 0;
                while (d < once.length() && d < again.value().length() && once.charAt(d) == again.value().charAt(d)) {
                    d++;
                }
                int from = Math.max(0, d - 40);
                throw new AssertionError(codec.name() + ": re-encoding is not stable for " + abbreviate(input)
                        + "; first difference at " + d + ": " + abbreviate(once.substring(from)) + " vs "
                        + abbreviate(again.value().substring(from)));
            }
        }
    }

    /**
     * Finding 1 (not fixed, docs/RELIABILITY.md): Jackson 2.23 rejects an escaped lone surrogate in
     * a member name ({@code {"a\udc26\u0000":1}}) although it accepts the raw character and the
     * same escape in a value; JavaScript accepts all three. The encoder escapes a lone surrogate
     * when the name also needs escaping (as {@code JSON.stringify} does), so such a name decodes
     * once but its re-encoding does not. The error is typed, so nothing is lost silently. Jackson
     * words it two ways: "Unpaired surrogate in field name" for a lone low surrogate, and "Broken
     * surrogate pair in field name" for a high surrogate followed by anything but a low one.
     */
    private static boolean isKnownSurrogateNameLimit(ProtocolException e) {
        return e.reason().contains("surrogate in field name") || e.reason().contains("surrogate pair in field name");
    }

    private static final java.util.regex.Pattern OVERFLOWING_NUMBER =
            java.util.regex.Pattern.compile("\\d{309,}|[eE]\\+?0*[1-9]\\d{2,}");

    /**
     * Finding 2 (upstream behaviour, kept): a number literal beyond the double range decodes as
     * Infinity, as {@code JSON.parse} does, and a required number then re-encodes as {@code null},
     * as {@code JSON.stringify} does, which no longer decodes.
     */
    private static boolean isNonFiniteNumber(ProtocolException e, String input) {
        return e.reason().endsWith("got null") && OVERFLOWING_NUMBER.matcher(input).find();
    }

    private static final java.util.regex.Pattern UNSAFE_FRACTION =
            java.util.regex.Pattern.compile("\\d{17,}\\.\\d|\\d[.\\d]*[eE]\\+?0*(1[6-9]|[2-9]\\d)");

    /**
     * Finding 11 (upstream behaviour, kept): a number with a fraction and more than 2^53 in its
     * integer part (e.g. {@code 1718812348812345003.5}) decodes as the nearest double, which has no
     * fraction; it re-encodes, as {@code JSON.stringify} writes it, as an integer literal
     * ({@code 1718812348812345000}), and BigIntJSON reads that back as a bigint, which a required
     * number refuses.
     */
    private static boolean isUnsafeFractionBecomingBigint(ProtocolException e, String input) {
        return e.reason().endsWith("got bigint") && UNSAFE_FRACTION.matcher(input).find();
    }

    /** Found by the opt-in run on 2026-12-04 (scale 60). */
    @Example
    void unsafeFractionReEncodesAsAnIntegerThatDecodesAsBigintLikeBigIntJson() {
        String input = "[\"status\",{\"ack\":true,\"lagReport\":{\"lastTimings\":{\"sendTimeMs\":1,"
                + "\"commitTimeMs\":2,\"receiveTimeMs\":1718812348812345003.5},\"nextSendTimeMs\":4}},"
                + "{\"watermark\":\"0a\"}]";
        String reEncoded = CODEC.encode(CODEC.decodeChangeStreamMessage(input));
        assertTrue(reEncoded.contains("\"receiveTimeMs\":1718812348812345000}"), reEncoded);
        ProtocolException e = org.junit.jupiter.api.Assertions.assertThrows(ProtocolException.class,
                () -> CODEC.decodeChangeStreamMessage(reEncoded));
        assertTrue(isUnsafeFractionBecomingBigint(e, input), e.getMessage());
        checkAllDecoders(input);
    }

    @Example
    void numberBeyondTheDoubleRangeReEncodesAsNullLikeJavaScript() {
        String input = "[\"status\",{\"ack\":false,\"lagReport\":{\"lastTimings\":{\"sendTimeMs\":1,\"commitTimeMs\":2,"
                + "\"receiveTimeMs\":3},\"nextSendTimeMs\":1" + "0".repeat(400) + ".5}},{\"watermark\":\"0a\"}]";
        String reEncoded = CODEC.encode(CODEC.decodeChangeStreamMessage(input));
        assertTrue(reEncoded.contains("\"nextSendTimeMs\":null"), reEncoded);
        ProtocolException e = org.junit.jupiter.api.Assertions.assertThrows(ProtocolException.class,
                () -> CODEC.decodeChangeStreamMessage(reEncoded));
        assertTrue(isNonFiniteNumber(e, input), e.getMessage());
    }

    @Example
    void escapedLoneSurrogateInAMemberNameIsATypedError() {
        String input = "[\"status\",{\"ack\":true},{\"wa\udc26term\\u0000ark\":\"watermark\"}]";
        String reEncoded = CODEC.encodeValue(CODEC.decodeValue(input));
        assertEquals("[\"status\",{\"ack\":true},{\"wa\\udc26term\\u0000ark\":\"watermark\"}]", reEncoded);
        ProtocolException e = org.junit.jupiter.api.Assertions.assertThrows(ProtocolException.class,
                () -> CODEC.decodeValue(reEncoded));
        assertTrue(isKnownSurrogateNameLimit(e), e.getMessage());
    }

    /** The CI failure of 2026-12-04: a high surrogate followed by an escaped NUL in a member name. */
    @Example
    void escapedHighSurrogateBeforeANonSurrogateInAMemberNameIsATypedError() {
        String input = "[\"begin\",{\"tag\":\"begin\",\"json\":\"p\",\"skipAck\":true},"
                + "{\"commitWaterm" + (char) 0xD800 + "\\u0000ark\":\"4e672g.01\"}]";
        String reEncoded = CODEC.encodeValue(CODEC.decodeValue(input));
        ProtocolException e = org.junit.jupiter.api.Assertions.assertThrows(ProtocolException.class,
                () -> CODEC.decodeValue(reEncoded));
        assertTrue(isKnownSurrogateNameLimit(e), e.getMessage());
        checkAllDecoders(input);
    }

    private static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /** Printable, so that reports keep the whole input: non-ASCII and control chars as escapes. */
    static String abbreviate(String s) {
        String cut = s.length() <= 300 ? s : s.substring(0, 300);
        StringBuilder b = new StringBuilder();
        for (char c : cut.toCharArray()) {
            if (c >= 0x20 && c < 0x7f) {
                b.append(c);
            } else {
                b.append(String.format("\\u%04x", (int) c));
            }
        }
        return s.length() <= 300 ? b.toString() : b + "...(" + s.length() + " chars)";
    }

    private static List<String> golden() {
        try {
            Path root = Path.of(GoldenMutationFuzzTest.class.getResource("/golden").toURI());
            try (Stream<Path> files = Files.walk(root)) {
                return files.filter(p -> p.toString().endsWith(".json")).sorted().map(p -> {
                    try {
                        return Files.readString(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }).toList();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
