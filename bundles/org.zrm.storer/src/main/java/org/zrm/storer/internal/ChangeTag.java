package org.zrm.storer.internal;

import java.util.Map;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.json.ProtocolException;

/**
 * Reads the top-level {@code "tag"} of a stored change's JSON text in the JVM.
 *
 * <p>Why not {@code change->>'tag'} in the catch-up query: {@code change} is a {@code json}
 * column, so the operator makes the server parse every row's whole text, and for a log of a
 * million rows that tripled the server's time for the catch-up query (0.75 s against 2.5 s in the
 * catchup-W5 fixture). Every change ZRM stores starts with {@code {"tag":"…"}} (the protocol
 * encoder writes the tag first), and so does every change zero-cache stores, which this reads
 * with a prefix check. Rows in any other shape (a key order or whitespace that another writer
 * chose) are parsed whole, as zero-cache's {@code JSON.parse} would read them.
 */
final class ChangeTag {

    private static final String PREFIX = "{\"tag\":\"";

    /**
     * The tags of nearly every row, returned as these constants: a catch-up of a million rows
     * would otherwise allocate a million tag strings, and hash each one again wherever it is
     * switched on (their hash codes are cached in the constants).
     */
    private static final String[] COMMON = {"begin", "commit", "insert", "update", "delete", "backfill", "truncate",
        "rollback"};

    private ChangeTag() {
    }

    /**
     * @param json a change's JSON text, as the {@code json} column returns it (valid JSON)
     * @param codec parses the rows that do not start with the tag
     * @return the value of its top-level {@code tag} member
     * @throws IllegalArgumentException if the text is not an object with a string {@code tag}
     */
    static String of(String json, ProtocolCodec codec) {
        if (json.startsWith(PREFIX)) {
            int end = json.indexOf('"', PREFIX.length());
            if (end > 0 && !hasBackslash(json, PREFIX.length(), end)) {
                int length = end - PREFIX.length();
                for (String tag : COMMON) {
                    if (tag.length() == length && json.startsWith(tag, PREFIX.length())) {
                        return tag;
                    }
                }
                return json.substring(PREFIX.length(), end);
            }
        }
        Object value;
        try {
            value = codec.decodeValueLikeJsonParse(json);
        } catch (ProtocolException e) {
            throw fail(json, e.getMessage(), e);
        }
        if (!(value instanceof Map<?, ?> change)) {
            throw fail(json, "not an object", null);
        }
        if (!(change.get("tag") instanceof String tag)) {
            throw fail(json, change.containsKey("tag") ? "\"tag\" is not a string" : "the object has no \"tag\"", null);
        }
        return tag;
    }

    /** Whether {@code s} has a backslash in {@code [from, to)}: an escaped tag takes the full parse. */
    private static boolean hasBackslash(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (s.charAt(i) == '\\') {
                return true;
            }
        }
        return false;
    }

    private static IllegalArgumentException fail(String json, String why, Throwable cause) {
        String head = json.length() > 80 ? json.substring(0, 80) + "…" : json;
        return new IllegalArgumentException("cannot read the tag of change " + head + ": " + why, cause);
    }
}
