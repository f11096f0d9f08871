package org.zrm.protocol.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.Change;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.JsonValues;
import org.zrm.protocol.json.internal.JsonPath;
import org.zrm.protocol.json.internal.JsonTreeParser;
import org.zrm.protocol.json.internal.JsonWriter;
import org.zrm.protocol.json.internal.NumberMemo;
import org.zrm.protocol.json.internal.RelationMemo;
import org.zrm.protocol.json.internal.ModelDecoder;
import org.zrm.protocol.json.internal.ModelEncoder;
import org.zrm.protocol.subscriber.Ack;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.Frame;
import org.zrm.protocol.subscriber.SnapshotStatus;
import org.zrm.protocol.subscriber.SubscriberProtocol;

/**
 * Encodes and decodes the change-source and change-streamer protocol messages.
 *
 * <p><b>Writing</b> reproduces {@code BigIntJSON.stringify}: no whitespace; members in upstream's
 * order (decoded objects keep their wire order, see {@link org.zrm.protocol.Passthrough}); absent
 * members omitted and {@code null} kept; integers and bigints as bare literals; doubles as
 * JavaScript prints them (non-finite → {@code null}); strings escaped like the
 * {@code json-custom-numbers} library (only {@code "}, {@code \} and control characters, plus lone
 * surrogates in strings that contain one of those).
 *
 * <p><b>Reading</b> follows {@code BigIntJSON.parse} (integers within ±(2^53−1) → {@link Long},
 * other integers → {@link java.math.BigInteger}, other numbers → {@link Double}) and upstream's
 * schemas in passthrough mode, but is strict about JSON syntax: one document, no trailing content,
 * no duplicate member names. Any violation raises {@link ProtocolException}; no partial result is
 * returned.
 *
 * <p>Instances are immutable and thread-safe; create one and share it.
 */
public final class ProtocolCodec {

    /** The start of every ack frame in its canonical form, {@code {"ack":<digits>}}. */
    private static final String ACK_PREFIX = "{\"ack\":";
    private static final byte[] ACK_PREFIX_BYTES = ACK_PREFIX.getBytes(StandardCharsets.US_ASCII);
    /** The longest canonical ack: the prefix, 15 digits and the closing brace. */
    private static final int MAX_CANONICAL_ACK = ACK_PREFIX.length() + 16;

    private final JsonTreeParser parser = new JsonTreeParser();
    private final NumberMemo numbers = new NumberMemo();
    private final RelationMemo relations = new RelationMemo();

    /**
     * Encodes {@code value} with {@code encoder} into a new writer that shares this codec's number
     * and relation memos: every encoding goes through here, so none of them writes without them.
     *
     * @throws NullPointerException naming {@code what} if {@code value} is {@code null}
     */
    private <T> String write(java.util.function.BiConsumer<JsonWriter, T> encoder, T value, String what) {
        JsonWriter w = new JsonWriter(numbers, relations);
        encoder.accept(w, Objects.requireNonNull(value, what));
        return w.toString();
    }

    // ------------------------------------------------------------ change-source protocol

    /** Writes a change-source downstream message, e.g. {@code ["begin",{…},{"commitWatermark":"…"}]}. */
    public String encode(ChangeStreamMessage message) {
        return write(ModelEncoder::changeStreamMessage, message, "message");
    }

    /** Reads a change-source downstream message. @throws ProtocolException if invalid */
    public ChangeStreamMessage decodeChangeStreamMessage(String json) {
        return ModelDecoder.changeStreamMessage(parser.parse(json));
    }

    /** Reads a UTF-8 change-source downstream message. @throws ProtocolException if invalid */
    public ChangeStreamMessage decodeChangeStreamMessage(byte[] utf8) {
        return ModelDecoder.changeStreamMessage(parser.parse(utf8));
    }

    /**
     * Writes a bare change object (the second tuple element), which is what the change log stores.
     */
    public String encodeChange(Change change) {
        return write(ModelEncoder::change, change, "change");
    }

    /** Reads a bare change object, dispatching on its {@code tag}. @throws ProtocolException if invalid */
    public Change decodeChange(String json) {
        return ModelDecoder.change(parser.parse(json), JsonPath.ROOT);
    }

    /** Writes an upstream ack, {@code ["status",{…},{"watermark":"…"}]}. */
    public String encode(ChangeSourceUpstream ack) {
        return write(ModelEncoder::changeSourceUpstream, ack, "ack");
    }

    /** Reads an upstream ack. @throws ProtocolException if invalid */
    public ChangeSourceUpstream decodeChangeSourceUpstream(String json) {
        return ModelDecoder.changeSourceUpstream(parser.parse(json));
    }

    /** Writes a backfill request object. */
    public String encode(BackfillRequest request) {
        return write(ModelEncoder::backfillRequest, request, "request");
    }

    /** Reads a backfill request object. @throws ProtocolException if invalid */
    public BackfillRequest decodeBackfillRequest(String json) {
        return ModelDecoder.backfillRequest(parser.parse(json), JsonPath.ROOT);
    }

    // ------------------------------------------------------------ subscriber protocol

    /** Writes a subscriber downstream message (the {@code msg} of a frame). */
    public String encode(Downstream message) {
        return write(ModelEncoder::downstream, message, "message");
    }

    /** Reads a subscriber downstream message. @throws ProtocolException if invalid */
    public Downstream decodeDownstream(String json) {
        return ModelDecoder.downstream(parser.parse(json));
    }

    /** Writes the {@code /snapshot} status message. */
    public String encode(SnapshotStatus status) {
        return write(ModelEncoder::snapshotStatus, status, "status");
    }

    /** Reads the {@code /snapshot} status message. @throws ProtocolException if invalid */
    public SnapshotStatus decodeSnapshotStatus(String json) {
        return ModelDecoder.snapshotStatus(parser.parse(json));
    }

    /** Writes a frame, {@code {"id":n,"msg":<msg verbatim>}}. */
    public String encode(Frame frame) {
        return frame.toJson();
    }

    /**
     * Reads a frame {@code {"id":n,"msg":…}} and returns the message text exactly as it appears
     * in the frame (not re-serialized). The message must be well-formed JSON; decode it with
     * {@link #decodeDownstream}. Frames are transport envelopes built by concatenation, so members
     * other than {@code id} and {@code msg} are rejected.
     *
     * @throws ProtocolException if invalid
     */
    public Frame decodeFrame(String json) {
        try (JsonParser p = frameParser(json)) {
            expect(p, p.nextToken(), JsonToken.START_OBJECT, "$", "object");
            Long id = null;
            String msg = null;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if (name.equals("id") && id == null) {
                    id = nonNegativeInteger(p, v, "$.id");
                } else if (name.equals("msg") && msg == null) {
                    if (v != JsonToken.START_ARRAY && v != JsonToken.START_OBJECT) {
                        throw new ProtocolException("$.msg", "expected array, got " + tokenType(v));
                    }
                    int start = (int) p.currentTokenLocation().getCharOffset();
                    p.skipChildren();
                    int end = (int) p.currentLocation().getCharOffset();
                    msg = json.substring(start, end);
                } else {
                    throw new ProtocolException("$." + name,
                            id != null && name.equals("id") || msg != null && name.equals("msg")
                                    ? "duplicate member name" : "unexpected member");
                }
            }
            expectEnd(p, t);
            if (id == null) {
                throw new ProtocolException("$.id", "missing required number");
            }
            if (msg == null) {
                throw new ProtocolException("$.msg", "missing required array");
            }
            return new Frame(id, msg);
        } catch (JsonProcessingException e) {
            throw new ProtocolException("$", "malformed JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ProtocolException("$", "unreadable JSON: " + e.getMessage(), e);
        }
    }

    /** @return the id of {@code {"ack":<digits>}} (no sign, no leading zero, at most 15 digits), else -1 */
    private static long canonicalAck(String json) {
        // Longer text cannot be canonical; other text's characters outside ASCII become '?', which
        // the canonical form never holds, so the bytes' answer is the text's.
        return json.length() > MAX_CANONICAL_ACK ? -1
                : canonicalAck(java.nio.ByteBuffer.wrap(json.getBytes(StandardCharsets.US_ASCII)));
    }

    /**
     * The id of an ack frame in its canonical form, {@code {"ack":<digits>}} (no whitespace, sign
     * or leading zero, at most 15 digits), read from the frame's UTF-8 bytes without decoding them
     * or allocating. Every frame a subscriber sends is such an ack, so a transport reads them with
     * this and passes anything else, as text, to {@link #decodeAck(String)}, which accepts every
     * other valid spelling and names what is wrong with an invalid one.
     *
     * @param utf8 the frame's payload, from its position to its limit; not modified
     * @return the id, or -1 if the bytes are not the canonical form
     * @since 1.2
     */
    public long canonicalAckId(java.nio.ByteBuffer utf8) {
        return canonicalAck(utf8);
    }

    /**
     * Reads the bytes with absolute gets, one loop per part: the server reads one of these per frame
     * and subscriber, so nothing is allocated (no view, no lambda) and nothing is decoded.
     */
    private static long canonicalAck(java.nio.ByteBuffer utf8) {
        // {"ack": then 1 to 15 digits (exact in a double, like every id upstream sends), then }
        int from = utf8.position();
        int n = utf8.remaining();
        int first = ACK_PREFIX_BYTES.length;
        if (n < first + 2 || n > MAX_CANONICAL_ACK || utf8.get(from + n - 1) != '}') {
            return -1;
        }
        for (int i = 0; i < first; i++) {
            if (utf8.get(from + i) != ACK_PREFIX_BYTES[i]) {
                return -1;
            }
        }
        if (utf8.get(from + first) == '0' && n != first + 2) {
            return -1;
        }
        long v = 0;
        for (int i = from + first, end = from + n - 1; i < end; i++) {
            int c = utf8.get(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /** Writes an ack frame, {@code {"ack":n}}. */
    public String encode(Ack ack) {
        return ack.toJson();
    }

    /** Reads an ack frame {@code {"ack":n}} (no other members allowed). @throws ProtocolException if invalid */
    public Ack decodeAck(String json) {
        // Every frame a subscriber sends is an ack, one per message it received, so the canonical
        // text {"ack":<digits>} is read without a JSON parser; anything else (whitespace, other
        // spellings, errors) takes the full parser and its precise messages.
        long fast = canonicalAck(json);
        if (fast >= 0) {
            return new Ack(fast);
        }
        try (JsonParser p = frameParser(json)) {
            expect(p, p.nextToken(), JsonToken.START_OBJECT, "$", "object");
            Long id = null;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if (name.equals("ack") && id == null) {
                    id = nonNegativeInteger(p, v, "$.ack");
                } else {
                    throw new ProtocolException("$." + name,
                            name.equals("ack") ? "duplicate member name" : "unexpected member");
                }
            }
            expectEnd(p, t);
            if (id == null) {
                throw new ProtocolException("$.ack", "missing required number");
            }
            return new Ack(id);
        } catch (JsonProcessingException e) {
            throw new ProtocolException("$", "malformed JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ProtocolException("$", "unreadable JSON: " + e.getMessage(), e);
        }
    }

    /**
     * Validates a requested subscriber protocol version (the {@code protocolVersion} query parameter
     * or the {@code v<n>} path segment).
     *
     * @return the version
     * @throws ProtocolException naming {@code protocolVersion} if it is not an integer in
     *     [{@value SubscriberProtocol#MIN_SUPPORTED_PROTOCOL_VERSION},
     *     {@value SubscriberProtocol#PROTOCOL_VERSION}]
     */
    public static int checkProtocolVersion(String version) {
        long v;
        try {
            v = Long.parseLong(Objects.requireNonNull(version, "version"));
        } catch (NumberFormatException e) {
            throw new ProtocolException("protocolVersion", "expected integer, got \"" + version + "\"", e);
        }
        if (!SubscriberProtocol.isSupported(v)) {
            throw new ProtocolException("protocolVersion", "unsupported version " + v + ", supported: ["
                    + SubscriberProtocol.MIN_SUPPORTED_PROTOCOL_VERSION + " … " + SubscriberProtocol.PROTOCOL_VERSION + "]");
        }
        return (int) v;
    }

    // ------------------------------------------------------------ plain JSON values

    /** Writes a plain-Java JSON value (see {@link JsonValues}) as {@code BigIntJSON.stringify} would. */
    public String encodeValue(Object value) {
        return new JsonWriter().value(value).toString();
    }

    /** Reads any JSON document into plain-Java values. @throws ProtocolException if malformed */
    public Object decodeValue(String json) {
        return parser.parse(json);
    }

    /**
     * Reads any JSON document into plain-Java values as JavaScript's {@code JSON.parse} does: a
     * duplicate member name keeps its first position and its last value ({@link #decodeValue}
     * rejects duplicates). For JSON that zero-cache reads with {@code JSON.parse} and that may
     * legitimately repeat a member, e.g. the published-schema JSON of Postgres, whose index
     * columns repeat when a table is in several of the shard's publications.
     *
     * @throws ProtocolException if malformed
     */
    public Object decodeValueLikeJsonParse(String json) {
        return parser.parseLikeJsonParse(json);
    }

    // ------------------------------------------------------------ helpers

    private JsonParser frameParser(String json) throws IOException {
        return parser.jsonFactory().createParser(Objects.requireNonNull(json, "json"));
    }

    private static void expect(JsonParser p, JsonToken t, JsonToken expected, String path, String type) {
        if (t != expected) {
            throw new ProtocolException(path, "expected " + type + ", got " + tokenType(t));
        }
    }

    private static void expectEnd(JsonParser p, JsonToken t) throws IOException {
        if (t != JsonToken.END_OBJECT) {
            throw new ProtocolException("$", "malformed JSON");
        }
        if (p.nextToken() != null) {
            throw new ProtocolException("$", "malformed JSON: unexpected content after the value");
        }
    }

    private static long nonNegativeInteger(JsonParser p, JsonToken t, String path) throws IOException {
        if (t != JsonToken.VALUE_NUMBER_INT) {
            throw new ProtocolException(path, "expected integer, got " + tokenType(t));
        }
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER || p.getLongValue() < 0
                || p.getLongValue() > JsonValues.MAX_SAFE_INTEGER) {
            throw new ProtocolException(path, "expected a non-negative safe integer, got " + p.getText());
        }
        return p.getLongValue();
    }

    private static String tokenType(JsonToken t) {
        if (t == null) {
            return "end of input";
        }
        return switch (t) {
            case START_OBJECT -> "object";
            case START_ARRAY -> "array";
            case VALUE_STRING -> "string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "number";
            case VALUE_TRUE, VALUE_FALSE -> "boolean";
            case VALUE_NULL -> "null";
            default -> t.toString();
        };
    }
}
