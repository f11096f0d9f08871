package org.zrm.changesource.custom.internal;

import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The connection URL of a custom change source: the configured endpoint URL plus the query
 * parameters upstream's client adds ({@code appID}, {@code shardNum}, one {@code publications}
 * per publication, and {@code lastWatermark} + {@code replicaVersion} when resuming).
 *
 * <p>As with the WHATWG {@code URLSearchParams} upstream uses, {@code appID}, {@code shardNum},
 * {@code lastWatermark} and {@code replicaVersion} replace a parameter of the same name already in
 * the endpoint URL, {@code publications} are appended, and other parameters (such as an
 * {@code apiKey}) are kept in place. Values are form-encoded ({@code ' '} as {@code +}).
 */
final class EndpointUrl {

    private final URI endpoint;

    /**
     * @param endpoint {@code ws://}, {@code wss://}, {@code http://} or {@code https://} URL; http(s)
     *     maps to ws(s) as upstream's {@code ws} client does
     * @throws IllegalArgumentException if the URL is empty, not absolute, of another scheme or without host
     */
    EndpointUrl(String endpoint) {
        if (endpoint == null || endpoint.isBlank()) {
            throw new IllegalArgumentException("upstream.db (ZERO_UPSTREAM_DB) must be the custom change source's"
                    + " ws://, wss://, http:// or https:// URL, but it is empty");
        }
        URI uri;
        try {
            uri = URI.create(endpoint.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("upstream.db is not a URL: " + e.getMessage(), e);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        String ws = switch (scheme) {
            case "ws", "http" -> "ws";
            case "wss", "https" -> "wss";
            default -> throw new IllegalArgumentException("upstream.db must be a ws://, wss://, http:// or https:// URL"
                    + " for ZERO_UPSTREAM_TYPE=custom, got scheme '" + scheme + "'");
        };
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("upstream.db has no host: " + describe(uri));
        }
        this.endpoint = URI.create(ws + uri.toString().substring(scheme.length()));
    }

    /** The endpoint without query or user info, for logs and errors (the query may hold an apiKey). */
    String displayName() {
        return describe(endpoint);
    }

    private static String describe(URI uri) {
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
                + (uri.getRawPath() == null ? "" : uri.getRawPath());
    }

    /**
     * The URL of one stream.
     *
     * @param appId {@code appID}
     * @param shardNum {@code shardNum}
     * @param publications {@code publications}, one parameter each, in this order
     * @param lastWatermark the watermark to resume after, or {@code null} for an initial sync
     * @param replicaVersion the replica's version; sent only with {@code lastWatermark}, and then required
     * @return the URL
     */
    URI streamUri(String appId, int shardNum, List<String> publications, String lastWatermark, String replicaVersion) {
        List<String[]> params = new ArrayList<>();
        String raw = endpoint.getRawQuery();
        if (raw != null && !raw.isEmpty()) {
            for (String pair : raw.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                params.add(new String[] {decode(eq < 0 ? pair : pair.substring(0, eq)),
                        eq < 0 ? "" : decode(pair.substring(eq + 1))});
            }
        }
        set(params, "appID", appId);
        set(params, "shardNum", Integer.toString(shardNum));
        for (String p : publications) {
            params.add(new String[] {"publications", p});
        }
        if (lastWatermark != null && !lastWatermark.isEmpty()) {
            if (replicaVersion == null || replicaVersion.isEmpty()) {
                throw new IllegalStateException("replicaVersion is required when clientWatermark is set");
            }
            set(params, "lastWatermark", lastWatermark);
            set(params, "replicaVersion", replicaVersion);
        }
        StringBuilder q = new StringBuilder();
        for (String[] p : params) {
            q.append(q.length() == 0 ? "" : "&").append(encode(p[0])).append('=').append(encode(p[1]));
        }
        String s = endpoint.toString();
        int cut = s.indexOf('?');
        int hash = s.indexOf('#');
        String fragment = hash < 0 ? "" : s.substring(hash);
        String base = cut >= 0 ? s.substring(0, cut) : hash >= 0 ? s.substring(0, hash) : s;
        return URI.create(base + "?" + q + fragment);
    }

    /** URLSearchParams.set: the first entry of that name takes the value, later ones are removed. */
    private static void set(List<String[]> params, String name, String value) {
        boolean found = false;
        for (int i = 0; i < params.size(); i++) {
            if (params.get(i)[0].equals(name)) {
                if (found) {
                    params.remove(i--);
                } else {
                    params.get(i)[1] = value;
                    found = true;
                }
            }
        }
        if (!found) {
            params.add(new String[] {name, value});
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
