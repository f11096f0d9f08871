package org.zrm.changestreamer;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Who a subscriber is and where it resumes, parsed from a {@code /replication/v{N}/changes}
 * request (upstream {@code SubscriberContext} and {@code getSubscriberContext}).
 *
 * @param protocolVersion the protocol version from the path, {@value ChangeStreamer#MIN_PROTOCOL_VERSION}
 *     to {@value ChangeStreamer#PROTOCOL_VERSION}; it controls which messages the subscriber gets
 * @param id the subscriber id, used in logs only
 * @param taskID the subscriber task's id, linking this subscription to a preceding
 *     {@code /snapshot} reservation, or {@code null} if not given
 * @param mode whose replica the subscriber maintains
 * @param replicaVersion the subscriber's replica version; must equal the streamer's
 * @param watermark the last commit watermark the subscriber has applied; only later changes are
 *     sent
 * @param initial whether this is the task's first subscription, i.e. its watermark comes from a
 *     freshly restored backup; such a subscription ends the task's snapshot reservation
 */
public record SubscriberContext(int protocolVersion, String id, String taskID, ReplicatorMode mode,
                                String replicaVersion, String watermark, boolean initial) {

    /** Upstream's path pattern for both WebSocket endpoints; the version is the digits after {@code v}. */
    private static final Pattern PATH = Pattern.compile("/replication/v(\\d+)/(changes|snapshot)\\z");

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code id}, {@code mode}, {@code replicaVersion} or
     *     {@code watermark} is {@code null}
     * @throws IllegalArgumentException if {@code protocolVersion} is unsupported or {@code taskID}
     *     is empty (use {@code null})
     */
    public SubscriberContext {
        checkProtocolVersion(BigInteger.valueOf(protocolVersion));
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(replicaVersion, "replicaVersion");
        Objects.requireNonNull(watermark, "watermark");
        if (taskID != null && taskID.isEmpty()) {
            throw new IllegalArgumentException("taskID must be null rather than empty");
        }
    }

    /**
     * Parses a subscription request exactly as upstream's HTTP server does.
     *
     * <ul>
     *   <li>The path must end in {@code /replication/v<N>/changes} (or {@code /snapshot}) with
     *       {@code 1 <= N <= 6}.</li>
     *   <li>{@code id}, {@code replicaVersion} and {@code watermark} are required; missing or
     *       empty gives {@code "invalid querystring - missing <name>"}.</li>
     *   <li>{@code taskID}: missing or empty gives {@code null}.</li>
     *   <li>{@code mode}: {@code "backup"} gives backup, anything else serving.</li>
     *   <li>{@code initial}: only {@code "true"} gives {@code true}.</li>
     * </ul>
     * Only the first value of a repeated parameter counts, like {@code URLSearchParams.get}.
     * Exception messages are upstream's texts; the HTTP layer closes the socket with code 1002
     * and reason {@code "Error: " + message}.
     *
     * @param path the request path (without query), possibly with a prefix before
     *     {@code /replication}
     * @param query the decoded query parameters
     * @return the context
     * @throws IllegalArgumentException with upstream's message if the request is invalid
     */
    public static SubscriberContext parse(String path, Map<String, List<String>> query) {
        int version = protocolVersionOf(path);
        return new SubscriberContext(
                version,
                param(query, "id", true),
                param(query, "taskID", false),
                ReplicatorMode.fromQueryParameter(param(query, "mode", false)),
                param(query, "replicaVersion", true),
                param(query, "watermark", true),
                "true".equals(param(query, "initial", false)));
    }

    /**
     * Extracts and checks the protocol version of a {@code /changes} or {@code /snapshot} path.
     *
     * @param path the request path
     * @return the version, 1 to 6
     * @throws IllegalArgumentException {@code "invalid path: <path>"} if the path does not match,
     *     or {@code "Cannot service client at protocol v<N>. Supported protocols: [v1 ... v6]"}
     */
    public static int protocolVersionOf(String path) {
        Matcher m = PATH.matcher(Objects.requireNonNull(path, "path"));
        if (!m.find()) {
            throw new IllegalArgumentException("invalid path: " + path);
        }
        // Digits may be arbitrarily long; BigInteger avoids an overflow that would misreport them.
        return checkProtocolVersion(new BigInteger(m.group(1)));
    }

    /**
     * Builds the query parameters a client sends for this context (upstream {@code getParams}):
     * {@code taskID} is always present (empty when {@code null}) and {@code initial} is
     * {@code "true"} or {@code "false"}. The protocol version goes into the path instead.
     *
     * @return the parameters in a stable order
     */
    public Map<String, String> toQueryParameters() {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", id);
        params.put("taskID", taskID == null ? "" : taskID);
        params.put("mode", mode.wireName());
        params.put("replicaVersion", replicaVersion);
        params.put("watermark", watermark);
        params.put("initial", initial ? "true" : "false");
        return params;
    }

    private static int checkProtocolVersion(BigInteger v) {
        if (v.compareTo(BigInteger.valueOf(ChangeStreamer.MIN_PROTOCOL_VERSION)) < 0
                || v.compareTo(BigInteger.valueOf(ChangeStreamer.PROTOCOL_VERSION)) > 0) {
            throw new IllegalArgumentException("Cannot service client at protocol v" + v + ". Supported protocols: [v"
                    + ChangeStreamer.MIN_PROTOCOL_VERSION + " ... v" + ChangeStreamer.PROTOCOL_VERSION + "]");
        }
        return v.intValue();
    }

    private static String param(Map<String, List<String>> query, String name, boolean required) {
        List<String> values = query.get(name);
        String value = values == null || values.isEmpty() ? null : values.get(0);
        if (value == null || value.isEmpty()) {
            if (required) {
                throw new IllegalArgumentException("invalid querystring - missing " + name);
            }
            return null;
        }
        return value;
    }
}
