package org.zrm.launcher;

import org.zrm.config.PostgresUri;
import org.zrm.secret.Secrets;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Checks what the launcher can check before anything starts, with zero-cache's rules, and returns
 * one line per problem (empty when all is well).
 */
public final class EnvValidator {

    private static final Pattern UPSTREAM_TYPE_SYNTAX = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Pattern STREAMER_URI_SYNTAX =
            Pattern.compile("(?i)(ws|wss|http|https)://[^\\s]+");
    private static final Pattern APP_ID = Pattern.compile("^[a-z0-9_]+$");
    private static final List<String> PORTS = List.of(EnvRegistry.PORT, EnvRegistry.CHANGE_STREAMER_PORT,
            EnvRegistry.LITESTREAM_PORT, EnvRegistry.ZRM_EMBEDDED_PG_PORT);

    /** @return the problems with {@code env}, one readable line each */
    public List<String> validate(Map<String, String> env) {
        List<String> problems = new ArrayList<>();
        for (String name : PORTS) {
            String value = env.get(name);
            if (value != null && !isIntegerIn(value, 1, 65535)) {
                problems.add(name + " must be a port number (an integer from 1 to 65535), got '" + shown(value) + "'");
            }
        }
        String appId = env.get(EnvRegistry.APP_ID);
        if (appId != null && !APP_ID.matcher(appId).matches()) {
            problems.add(EnvRegistry.APP_ID + " must match " + APP_ID.pattern()
                    + " (lower-case letters, digits, underscores), got '" + shown(appId) + "'");
        }
        String batch = env.get(EnvRegistry.CHANGE_LOG_BATCH_SIZE);
        if (batch != null && !isIntegerIn(batch, 1, Integer.MAX_VALUE)) {
            problems.add(EnvRegistry.CHANGE_LOG_BATCH_SIZE + " must be an integer >= 1, got '" + shown(batch) + "'");
        }
        String shardNum = env.get(EnvRegistry.SHARD_NUM);
        if (shardNum != null && !isIntegerIn(shardNum, 0, Integer.MAX_VALUE)) {
            problems.add(EnvRegistry.SHARD_NUM + " must be an integer >= 0, got '" + shown(shardNum) + "'");
        }
        if (env.get(EnvRegistry.SHARD_ID) != null) {
            // zero-cache's own wording (config/zero-config.ts, shardOptions.id).
            problems.add(EnvRegistry.SHARD_ID + " is no longer an option. Please use " + EnvRegistry.APP_ID + " instead.");
        }
        String type = env.getOrDefault(EnvRegistry.UPSTREAM_TYPE, "pg");
        // Any type a deployed bundle may register is allowed (pg ships; custom and third-party
        // sources come as bundles); the runtime says when nothing registers it. Only the syntax is
        // checked here, because the value is spliced into a DS target filter.
        if (!UPSTREAM_TYPE_SYNTAX.matcher(type).matches()) {
            problems.add(EnvRegistry.UPSTREAM_TYPE + " must be a change-source type (letters, digits, '.', '_' or '-'),"
                    + " such as pg, got '" + shown(type) + "'");
        }
        String streamerUri = env.get(EnvRegistry.CHANGE_STREAMER_URI);
        if (streamerUri != null && !streamerUri.isBlank() && !STREAMER_URI_SYNTAX.matcher(streamerUri.strip()).matches()) {
            problems.add(EnvRegistry.CHANGE_STREAMER_URI + " must be a ws://, wss://, http:// or https:// URI, got '"
                    + shown(streamerUri) + "'");
        }
        String upstream = env.get(EnvRegistry.UPSTREAM_DB);
        if (type.equals("pg") && upstream != null && !upstream.isBlank()
                && !upstream.startsWith("postgresql://") && !upstream.startsWith("postgres://")) {
            problems.add(EnvRegistry.UPSTREAM_DB + " must be a postgresql:// or postgres:// URI, got '"
                    + shown(upstream) + "'");
        } else if (type.equals("pg")) {
            // The runtime's components read these with the same parser; failing here gives one
            // clear line at launch instead of a failed component later.
            checkPostgresUri(EnvRegistry.UPSTREAM_DB, upstream, problems);
        }
        String changeDb = env.get(EnvRegistry.CHANGE_DB);
        boolean upstreamIsPostgres = upstream != null && (upstream.startsWith("postgresql://") || upstream.startsWith("postgres://"));
        if (type.equals("custom") && (upstream == null || upstream.isBlank())) {
            // Without an endpoint the custom source would be registered but never usable, and the
            // runtime would wait for it forever: say so before anything starts.
            problems.add(EnvRegistry.UPSTREAM_DB + " must be the custom change-source endpoint's ws://, wss://, http://"
                    + " or https:// URL when " + EnvRegistry.UPSTREAM_TYPE + "=custom");
        } else if (type.equals("custom") && !STREAMER_URI_SYNTAX.matcher(upstream.strip()).matches()) {
            problems.add(EnvRegistry.UPSTREAM_DB + " must be a ws://, wss://, http:// or https:// URL when "
                    + EnvRegistry.UPSTREAM_TYPE + "=custom, got '" + shown(upstream) + "'");
        }
        if (!type.equals("pg") && upstream != null && !upstream.isBlank() && !upstreamIsPostgres
                && (changeDb == null || changeDb.isBlank())) {
            // The change log lives in Postgres. It defaults to the upstream, which for this source
            // is not a Postgres URL; the embedded Postgres only starts when ZERO_UPSTREAM_DB is unset.
            problems.add(EnvRegistry.CHANGE_DB + " must be set (a postgresql:// URI for the change log) when "
                    + EnvRegistry.UPSTREAM_TYPE + "=" + type + " and " + EnvRegistry.UPSTREAM_DB + " is not a Postgres URI");
        }
        checkPostgresUri(EnvRegistry.CHANGE_DB, changeDb, problems);
        return problems;
    }

    private static void checkPostgresUri(String name, String value, List<String> problems) {
        if (value == null || value.isBlank()) {
            return;
        }
        try {
            PostgresUri.parse(value, name);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
    }

    /**
     * A rejected value as a problem line shows it. A value in the wrong variable may be a
     * connection URI, so every value is masked like a URI; and one not even shaped like
     * {@code scheme://user:password@} ({@code postgres:u:pw@h}) shows nothing before its last '@'.
     */
    static String shown(String value) {
        String masked = Secrets.maskUrls(value);
        int at = masked.lastIndexOf('@');
        int colon = masked.indexOf(':');
        if (at < 0 || colon < 0 || colon > at || masked.startsWith(":" + Secrets.MASK + "@", at - 5)) {
            return masked;
        }
        return Secrets.MASK + masked.substring(at);
    }

    private static boolean isIntegerIn(String text, int min, int max) {
        try {
            long value = Long.parseLong(text.strip());
            return value >= min && value <= max;
        } catch (NumberFormatException e) {
            return false;   // not an integer: the caller reports it
        }
    }
}
