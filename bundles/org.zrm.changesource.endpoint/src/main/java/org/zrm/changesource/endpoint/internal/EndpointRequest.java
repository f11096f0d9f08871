package org.zrm.changesource.endpoint.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;

/**
 * A validated {@code /changes/v0/stream} request: the query parameters zero-cache's custom client
 * sends ({@code appID}, {@code shardNum}, one {@code publications} per publication, and
 * {@code lastWatermark} plus {@code replicaVersion} when resuming), checked against the shard this
 * runtime replicates.
 *
 * @param appID the app id
 * @param shardNum the shard number
 * @param publications the publications as requested, in request order
 * @param lastWatermark the last watermark the client stored, or {@code null} for a fresh client
 * @param replicaVersion the client's replica version, or {@code null} for a fresh client
 */
record EndpointRequest(String appID, int shardNum, List<String> publications, String lastWatermark,
                       String replicaVersion) {

    /** What zero-cache accepts as an app id (lower-case letters, digits and underscores). */
    private static final Pattern APP_ID = Pattern.compile("[a-z0-9_]+");

    /** The shard this runtime serves; a request for any other shard is refused. */
    record Served(ApiKey apiKey, String appID, int shardNum, List<String> publications) {
        Served {
            publications = List.copyOf(publications);
        }
    }

    /** @return whether the client resumes rather than asks for the initial snapshot */
    boolean resuming() {
        return lastWatermark != null;
    }

    /**
     * Validates a request. The API key is checked first, so an unauthenticated client learns
     * nothing about the shard.
     *
     * @param query the decoded query parameters
     * @param served what this runtime serves
     * @return the request
     * @throws Rejection with {@link Reason#UNAUTHORIZED} or {@link Reason#BAD_PARAMETERS}
     */
    static EndpointRequest parse(Map<String, List<String>> query, Served served) throws Rejection {
        List<String> keys = query.get("apiKey");
        if (keys == null || keys.size() != 1 || !served.apiKey().matches(keys.get(0))) {
            throw new Rejection(Reason.UNAUTHORIZED, keys == null || keys.isEmpty() ? "missing apiKey" : "invalid apiKey");
        }
        String appID = single(query, "appID");
        if (!APP_ID.matcher(appID).matches()) {
            throw bad("invalid appID " + quote(appID) + ": only lower-case letters, digits and underscores");
        }
        if (!appID.equals(served.appID())) {
            throw bad("appID " + quote(appID) + " is not served here (this endpoint serves " + quote(served.appID()) + ")");
        }
        String shard = single(query, "shardNum");
        int shardNum;
        try {
            shardNum = shard.matches("\\d{1,9}") ? Integer.parseInt(shard) : -1;
        } catch (NumberFormatException e) {
            shardNum = -1;
        }
        if (shardNum < 0) {
            throw bad("invalid shardNum " + quote(shard) + ": expected a non-negative integer");
        }
        if (shardNum != served.shardNum()) {
            throw bad("shardNum " + shardNum + " is not served here (this endpoint serves " + served.shardNum() + ")");
        }
        List<String> publications = new ArrayList<>(query.getOrDefault("publications", List.of()));
        // zero-cache sends none when ZERO_APP_PUBLICATIONS is empty, i.e. "whatever the source replicates".
        if (!publications.isEmpty()
                && !publications.stream().sorted().distinct().toList().equals(
                        served.publications().stream().sorted().distinct().toList())) {
            throw bad("publications " + publications + " do not match the replicated publications "
                    + served.publications());
        }
        String last = optional(query, "lastWatermark");
        String replicaVersion = optional(query, "replicaVersion");
        if ((last == null) != (replicaVersion == null)) {
            throw bad("lastWatermark and replicaVersion must be given together");
        }
        return new EndpointRequest(appID, shardNum, publications, last, replicaVersion);
    }

    private static String single(Map<String, List<String>> query, String name) throws Rejection {
        List<String> values = query.get(name);
        if (values == null || values.isEmpty() || values.get(0).isEmpty()) {
            throw bad("missing " + name);
        }
        if (values.size() > 1) {
            throw bad(name + " given " + values.size() + " times");
        }
        return values.get(0);
    }

    private static String optional(Map<String, List<String>> query, String name) throws Rejection {
        List<String> values = query.get(name);
        if (values == null || values.isEmpty()) {
            return null;
        }
        return single(query, name);
    }

    private static Rejection bad(String message) {
        return new Rejection(Reason.BAD_PARAMETERS, message);
    }

    private static String quote(String s) {
        return "\"" + (s.length() > 40 ? s.substring(0, 37) + "..." : s) + "\"";
    }
}
