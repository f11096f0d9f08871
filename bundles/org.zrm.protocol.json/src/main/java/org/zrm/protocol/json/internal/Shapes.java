package org.zrm.protocol.json.internal;

import static org.zrm.protocol.json.internal.Shape.names;

/**
 * Member layouts of every protocol object. Canonical orders follow what upstream emits: the
 * Postgres change source's object literals and published-schema queries (which contribute the
 * passthrough members listed here) and the valita schemas' declaration order otherwise.
 */
final class Shapes {

    private Shapes() {}

    static final Shape BEGIN = new Shape(names("tag", "json", "skipAck"),
            "tag", "commitLsn", "commitTime", "xid", "json", "skipAck");
    static final Shape COMMIT = new Shape(names("tag"),
            "tag", "flags", "commitLsn", "commitEndLsn", "commitTime");
    static final Shape ROLLBACK = new Shape(names("tag"), "tag");
    static final Shape RELATION = new Shape(names("schema", "name", "rowKey", "keyColumns", "replicaIdentity"),
            "tag", "relationOid", "schema", "name", "rowKey", "keyColumns", "replicaIdentity");
    static final Shape ROW_KEY = new Shape(names("columns", "type"), "columns", "type");
    static final Shape IDENTIFIER = new Shape(names("schema", "name"), "schema", "name");
    static final Shape TABLE_METADATA = new Shape(names("rowKey"), "schemaOID", "relationOID", "rowKey");
    static final Shape COLUMN_SPEC = new Shape(
            names("pos", "dataType", "pgTypeClass", "elemPgTypeClass", "characterMaximumLength", "notNull", "dflt"),
            "pos", "dataType", "pgTypeClass", "elemPgTypeClass", "typeOID", "characterMaximumLength",
            "notNull", "dflt");
    static final Shape TABLE_SPEC = new Shape(names("schema", "name", "columns", "primaryKey"),
            "oid", "schema", "schemaOID", "name", "replicaIdentity", "columns", "primaryKey",
            "publications", "replicaIdentityColumns");
    static final Shape INDEX_SPEC = new Shape(names("schema", "tableName", "name", "unique", "columns"),
            "schema", "tableName", "name", "unique", "isPrimaryKey", "isReplicaIdentity", "isImmediate",
            "columns");
    static final Shape NAMED_COLUMN = new Shape(names("name", "spec"), "name", "spec");
    static final Shape DOWNLOAD_STATUS = new Shape(names("rows", "totalRows", "totalBytes"),
            "rows", "totalRows", "totalBytes");
    static final Shape TIMINGS = new Shape(names("sendTimeMs", "commitTimeMs", "receiveTimeMs"),
            "sendTimeMs", "commitTimeMs", "receiveTimeMs");
    static final Shape LAG_REPORT = new Shape(names("lastTimings", "nextSendTimeMs"),
            "lastTimings", "nextSendTimeMs");

    static final Shape INSERT = new Shape(names("tag", "relation", "new"), "tag", "relation", "new");
    static final Shape UPDATE = new Shape(names("tag", "relation", "key", "new"),
            "tag", "relation", "key", "old", "new");
    static final Shape DELETE = new Shape(names("tag", "relation", "key"), "tag", "relation", "key", "old");
    static final Shape TRUNCATE = new Shape(names("tag", "relations"),
            "tag", "cascade", "restartIdentity", "relations");
    static final Shape BACKFILL = new Shape(names("tag", "relation", "columns", "watermark", "rowValues", "status"),
            "tag", "relation", "columns", "watermark", "rowValues", "status");
    static final Shape BACKFILL_COMPLETED = new Shape(names("tag", "relation", "columns", "watermark", "status"),
            "tag", "relation", "columns", "watermark", "status");
    static final Shape CREATE_TABLE = new Shape(names("tag", "spec", "metadata", "backfill"),
            "tag", "spec", "metadata", "backfill");
    static final Shape RENAME_TABLE = new Shape(names("tag", "old", "new"), "tag", "old", "new");
    static final Shape UPDATE_TABLE_METADATA = new Shape(names("tag", "table", "old", "new"),
            "tag", "table", "old", "new");
    static final Shape ADD_COLUMN = new Shape(names("tag", "table", "column", "tableMetadata", "backfill"),
            "tag", "table", "column", "tableMetadata", "backfill");
    static final Shape UPDATE_COLUMN = new Shape(names("tag", "table", "old", "new"), "tag", "table", "old", "new");
    static final Shape DROP_COLUMN = new Shape(names("tag", "table", "column"), "tag", "table", "column");
    static final Shape DROP_TABLE = new Shape(names("tag", "id"), "tag", "id");
    static final Shape CREATE_INDEX = new Shape(names("tag", "spec"), "tag", "spec");
    static final Shape DROP_INDEX = new Shape(names("tag", "id"), "tag", "id");

    static final Shape RESET_REQUIRED = new Shape(names("tag", "message", "errorDetails"),
            "tag", "message", "errorDetails");
    static final Shape DOWNSTREAM_STATUS = new Shape(names("ack", "lagReport"), "ack", "lagReport");
    static final Shape COMMIT_WATERMARK = new Shape(names("commitWatermark"), "commitWatermark");
    static final Shape WATERMARK = new Shape(names("watermark"), "watermark");
    static final Shape BACKFILL_REQUEST = new Shape(names("table", "columns"), "table", "columns");
    static final Shape BACKFILL_REQUEST_TABLE = new Shape(names("schema", "name", "metadata"),
            "schema", "name", "metadata");

    static final Shape STREAMER_STATUS = new Shape(names("tag", "lagReport"), "tag", "lagReport");
    static final Shape SUBSCRIPTION_ERROR = new Shape(names("type", "message"), "type", "message");
    static final Shape SNAPSHOT_STATUS = new Shape(names("tag", "backupURL", "replicaVersion", "minWatermark"),
            "tag", "backupURL", "replicaVersion", "minWatermark");
}
