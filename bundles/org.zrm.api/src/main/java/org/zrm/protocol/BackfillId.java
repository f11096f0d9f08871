package org.zrm.protocol;

import java.util.Map;

/**
 * A source-specific, opaque identifier of a column to backfill (a JSON object). The Postgres source
 * uses {@code {"attNum":n}}. The change-streamer stores it verbatim and returns it in
 * {@link BackfillRequest#columns()}.
 *
 * @param value the JSON object (never {@code null})
 */
public record BackfillId(Map<String, Object> value) {

    public BackfillId {
        value = JsonValues.freezeObject(value);
    }
}
