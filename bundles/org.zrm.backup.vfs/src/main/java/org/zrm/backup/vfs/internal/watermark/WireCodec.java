package org.zrm.backup.vfs.internal.watermark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Optional;

/**
 * The JSON-lines protocol between the monitor and its reader child process: upstream's IPC tuples
 * (structured clone over a Node fork channel), here one JSON array per line on the child's
 * stdin/stdout.
 * <ul>
 *   <li>child to parent {@code ["ready",{"ready":true}]}, sent before the reader is built;</li>
 *   <li>parent to child {@code ["backupWatermarkRequest",{"requestID":"<n>"}]};</li>
 *   <li>child to parent {@code ["backupWatermarkResponse",{"requestID":…,"result":{watermark,
 *       writeTimeMs,txid,lagSeconds,observedAtMs}}]} or {@code …,"error":{"name":…,"message":…}}]}.</li>
 * </ul>
 * Lines that are not one of these messages (for example log output of the native extension, which
 * writes to stdout when {@code LITESTREAM_LOG_FILE} is unset) parse to {@link Optional#empty()}.
 * Thread-safe.
 */
public final class WireCodec {

    /** A protocol message. */
    public sealed interface Message permits Ready, Request, Response {
    }

    /** The child is ready for requests. */
    public record Ready() implements Message {
    }

    /** A request for the backup watermark. */
    public record Request(String requestID) implements Message {
    }

    /**
     * A response: exactly one of {@code result} and {@code errorMessage} is expected; a response
     * with neither is reported as "missing result".
     */
    public record Response(String requestID, JsonNode result, String errorName, String errorMessage)
            implements Message {
    }

    private static final String READY = "ready";
    private static final String REQUEST = "backupWatermarkRequest";
    private static final String RESPONSE = "backupWatermarkResponse";

    private final ObjectMapper mapper = new ObjectMapper();

    public String ready() {
        ObjectNode body = mapper.createObjectNode().put("ready", true);
        return write(tuple(READY, body));
    }

    public String request(String requestID) {
        return write(tuple(REQUEST, mapper.createObjectNode().put("requestID", requestID)));
    }

    public String result(String requestID, BackupWatermark w) {
        ObjectNode result = mapper.createObjectNode();
        result.put("watermark", w.watermark());
        if (w.writeTimeMs() == null) {
            result.putNull("writeTimeMs");
        } else {
            result.put("writeTimeMs", w.writeTimeMs());
        }
        result.put("txid", w.txid());
        result.put("lagSeconds", w.lagSeconds());
        result.put("observedAtMs", w.observedAtMs());
        ObjectNode body = mapper.createObjectNode().put("requestID", requestID);
        body.set("result", result);
        return write(tuple(RESPONSE, body));
    }

    public String error(String requestID, String name, String message) {
        ObjectNode error = mapper.createObjectNode().put("name", name).put("message", message);
        ObjectNode body = mapper.createObjectNode().put("requestID", requestID);
        body.set("error", error);
        return write(tuple(RESPONSE, body));
    }

    /**
     * @param line one line read from the other side
     * @return the message, or empty if the line is not a protocol message
     */
    public Optional<Message> parse(String line) {
        JsonNode node;
        try {
            node = mapper.readTree(line);
        } catch (IOException e) {
            return Optional.empty(); // not JSON: other output on the channel
        }
        if (node == null || !node.isArray() || node.size() != 2 || !node.get(0).isTextual()
                || !node.get(1).isObject()) {
            return Optional.empty();
        }
        JsonNode body = node.get(1);
        switch (node.get(0).asText()) {
            case READY:
                return body.path("ready").isBoolean() && body.get("ready").asBoolean()
                        ? Optional.of(new Ready()) : Optional.empty();
            case REQUEST:
                return body.path("requestID").isTextual()
                        ? Optional.of(new Request(body.get("requestID").asText())) : Optional.empty();
            case RESPONSE:
                return parseResponse(body);
            default:
                return Optional.empty();
        }
    }

    private Optional<Message> parseResponse(JsonNode body) {
        if (!body.path("requestID").isTextual()) {
            return Optional.empty();
        }
        JsonNode result = body.get("result");
        JsonNode error = body.get("error");
        String errorName = null;
        String errorMessage = null;
        if (error != null && !error.isMissingNode()) {
            errorName = error.path("name").isTextual() ? error.get("name").asText() : "Error";
            errorMessage = error.path("message").isTextual() ? error.get("message").asText()
                    : "backup watermark reader failed without a message: " + error;
        }
        return Optional.of(new Response(body.get("requestID").asText(),
                result == null || result.isNull() ? null : result, errorName, errorMessage));
    }

    /**
     * Validates a response's result as upstream's reader validates its row.
     *
     * @throws IOException naming the offending result if a field is missing or has the wrong type
     */
    public BackupWatermark watermark(JsonNode result) throws IOException {
        JsonNode watermark = result.get("watermark");
        JsonNode writeTime = result.get("writeTimeMs");
        JsonNode txid = result.get("txid");
        JsonNode lag = result.get("lagSeconds");
        JsonNode observedAt = result.get("observedAtMs");
        boolean valid = result.isObject()
                && watermark != null && watermark.isTextual()
                && writeTime != null && (writeTime.isNull() || writeTime.isNumber())
                && txid != null && txid.isTextual()
                && lag != null && lag.isNumber()
                && observedAt != null && observedAt.isNumber();
        if (!valid) {
            throw new IOException("malformed backup watermark result: " + result);
        }
        return new BackupWatermark(watermark.asText(), writeTime.isNull() ? null : writeTime.asLong(), txid.asText(),
                lag.asLong(), observedAt.asLong());
    }

    private ArrayNode tuple(String tag, ObjectNode body) {
        ArrayNode tuple = mapper.createArrayNode();
        tuple.add(tag);
        tuple.add(body);
        return tuple;
    }

    private String write(JsonNode node) {
        try {
            return mapper.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            // a tree of strings and numbers always serialises
            throw new IllegalStateException("cannot serialise " + node, e);
        }
    }
}
