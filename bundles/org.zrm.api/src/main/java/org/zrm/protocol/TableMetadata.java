package org.zrm.protocol;

import java.util.Map;
import java.util.Objects;

/**
 * Opaque, source-specific table metadata that the change-streamer tracks and hands back in
 * {@link BackfillRequest}s: {@code {"rowKey":{…}, …rest}}. The Postgres source sends
 * {@code {"schemaOID":…,"relationOID":…,"rowKey":{"col":{"attNum":n}}}}; members other than
 * {@code rowKey} are arbitrary JSON and live in {@link #extra()}.
 *
 * @param rowKey column name → JSON value (never {@code null})
 * @param extra the other members
 */
public record TableMetadata(Map<String, Object> rowKey, Passthrough extra) {

    public TableMetadata {
        rowKey = JsonValues.freezeObject(rowKey);
        Objects.requireNonNull(extra, "extra").requireNoneOf("rowKey");
    }
}
