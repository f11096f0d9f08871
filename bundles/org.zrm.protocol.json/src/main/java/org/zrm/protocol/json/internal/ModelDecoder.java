package org.zrm.protocol.json.internal;

import java.util.List;
import java.util.Map;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.Begin;
import org.zrm.protocol.Change;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.Commit;
import org.zrm.protocol.CreateIndex;
import org.zrm.protocol.CreateTable;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.Delete;
import org.zrm.protocol.DownloadStatus;
import org.zrm.protocol.DownstreamStatus;
import org.zrm.protocol.DropColumn;
import org.zrm.protocol.DropIndex;
import org.zrm.protocol.DropTable;
import org.zrm.protocol.Identifier;
import org.zrm.protocol.IndexDirection;
import org.zrm.protocol.IndexSpec;
import org.zrm.protocol.Insert;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.LagReport;
import org.zrm.protocol.NamedColumn;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.Relation;
import org.zrm.protocol.RenameTable;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.ResetRequired;
import org.zrm.protocol.Rollback;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.TableMetadata;
import org.zrm.protocol.TableSpec;
import org.zrm.protocol.Timings;
import org.zrm.protocol.Truncate;
import org.zrm.protocol.Update;
import org.zrm.protocol.UpdateColumn;
import org.zrm.protocol.UpdateTableMetadata;
import org.zrm.protocol.json.ProtocolException;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.protocol.subscriber.SnapshotStatus;
import org.zrm.protocol.subscriber.StreamerStatus;
import org.zrm.protocol.subscriber.SubscriptionError;

/**
 * Maps parsed JSON values (see {@link JsonTreeParser}) onto the protocol records, validating like
 * upstream's valita schemas in passthrough mode. Stateless.
 */
public final class ModelDecoder {

    private static final String REPLICA_IDENTITIES = "\"default\", \"nothing\", \"full\", \"index\"";
    private static final String PG_TYPE_CLASSES = "\"b\", \"c\", \"d\", \"e\", \"p\", \"r\", \"m\"";

    private ModelDecoder() {}

    // ---------------------------------------------------------------- tuples

    /** A change-source downstream tuple. */
    public static ChangeStreamMessage changeStreamMessage(Object root) {
        JsonPath $ = JsonPath.ROOT;
        List<Object> tuple = ObjectReader.Values.array(root, $);
        String type = tupleType(tuple);
        switch (type) {
            case ChangeStreamMessage.ControlMessage.TYPE:
                arity(tuple, 2, type);
                return new ChangeStreamMessage.ControlMessage(resetRequired(tuple.get(1), $.index(1)));
            case ChangeStreamMessage.StatusMessage.TYPE: {
                arity(tuple, 3, type);
                DownstreamStatus status = downstreamStatus(tuple.get(1), $.index(1));
                ObjectReader trailer = new ObjectReader(tuple.get(2), $.index(2), Shapes.WATERMARK);
                return new ChangeStreamMessage.StatusMessage(status, trailer.reqString("watermark"),
                        trailer.passthrough());
            }
            default:
                return changeStreamData(tuple, type, "begin, data, commit, rollback, control, status");
        }
    }

    /** A subscriber downstream tuple. */
    public static Downstream downstream(Object root) {
        JsonPath $ = JsonPath.ROOT;
        List<Object> tuple = ObjectReader.Values.array(root, $);
        String type = tupleType(tuple);
        switch (type) {
            case Downstream.StatusMessage.TYPE:
                arity(tuple, 2, type);
                return new Downstream.StatusMessage(streamerStatus(tuple.get(1), $.index(1)));
            case Downstream.ErrorMessage.TYPE:
                arity(tuple, 2, type);
                return new Downstream.ErrorMessage(subscriptionError(tuple.get(1), $.index(1)));
            default:
                return new Downstream.ChangeMessage(
                        changeStreamData(tuple, type, "status, begin, data, commit, rollback, error"));
        }
    }

    private static ChangeStreamData changeStreamData(List<Object> tuple, String type, String allowed) {
        JsonPath $ = JsonPath.ROOT;
        switch (type) {
            case ChangeStreamMessage.BeginMessage.TYPE: {
                arity(tuple, 3, type);
                Begin begin = begin(tuple.get(1), $.index(1));
                ObjectReader trailer = new ObjectReader(tuple.get(2), $.index(2), Shapes.COMMIT_WATERMARK);
                return new ChangeStreamMessage.BeginMessage(begin, trailer.reqString("commitWatermark"),
                        trailer.passthrough());
            }
            case ChangeStreamMessage.DataMessage.TYPE:
                arity(tuple, 2, type);
                return new ChangeStreamMessage.DataMessage(dataOrSchemaChange(tuple.get(1), $.index(1)));
            case ChangeStreamMessage.CommitMessage.TYPE: {
                arity(tuple, 3, type);
                Commit commit = commit(tuple.get(1), $.index(1));
                ObjectReader trailer = new ObjectReader(tuple.get(2), $.index(2), Shapes.WATERMARK);
                return new ChangeStreamMessage.CommitMessage(commit, trailer.reqString("watermark"),
                        trailer.passthrough());
            }
            case ChangeStreamMessage.RollbackMessage.TYPE:
                arity(tuple, 2, type);
                return new ChangeStreamMessage.RollbackMessage(rollback(tuple.get(1), $.index(1)));
            default:
                throw new ProtocolException("$[0]", "unknown message type \"" + type + "\", expected one of " + allowed);
        }
    }

    /** An upstream ack tuple {@code ["status", commit|status, {watermark}]}. */
    public static ChangeSourceUpstream changeSourceUpstream(Object root) {
        JsonPath $ = JsonPath.ROOT;
        List<Object> tuple = ObjectReader.Values.array(root, $);
        String type = tupleType(tuple);
        if (!type.equals(ChangeSourceUpstream.TYPE)) {
            throw new ProtocolException("$[0]", "unknown message type \"" + type + "\", expected status");
        }
        arity(tuple, 3, type);
        Object body = tuple.get(1);
        ObjectReader.Values.object(body, $.index(1));
        // valita tries the status schema first, which in passthrough mode would swallow a commit
        // body too; a commit body is recognisable by its tag, so decide on that.
        boolean isCommit = body instanceof Map<?, ?> m && Commit.TAG.equals(m.get("tag"));
        ObjectReader trailer = new ObjectReader(tuple.get(2), $.index(2), Shapes.WATERMARK);
        return new ChangeSourceUpstream(
                isCommit ? commit(body, $.index(1)) : downstreamStatus(body, $.index(1)),
                trailer.reqString("watermark"), trailer.passthrough());
    }

    /** The {@code /snapshot} status tuple. */
    public static SnapshotStatus snapshotStatus(Object root) {
        JsonPath $ = JsonPath.ROOT;
        List<Object> tuple = ObjectReader.Values.array(root, $);
        String type = tupleType(tuple);
        if (!type.equals(SnapshotStatus.TAG)) {
            throw new ProtocolException("$[0]", "unknown message type \"" + type + "\", expected status");
        }
        arity(tuple, 2, type);
        ObjectReader r = new ObjectReader(tuple.get(1), $.index(1), Shapes.SNAPSHOT_STATUS);
        r.reqTag(SnapshotStatus.TAG);
        return new SnapshotStatus(r.reqString("backupURL"), r.reqString("replicaVersion"),
                r.reqString("minWatermark"), r.passthrough());
    }

    private static String tupleType(List<Object> tuple) {
        if (tuple.isEmpty()) {
            throw new ProtocolException("$", "expected a non-empty array");
        }
        return ObjectReader.Values.string(tuple.get(0), JsonPath.ROOT.index(0));
    }

    private static void arity(List<Object> tuple, int n, String type) {
        if (tuple.size() != n) {
            throw new ProtocolException("$", "\"" + type + "\" message must have " + n + " elements, got "
                    + tuple.size());
        }
    }

    // ---------------------------------------------------------------- changes

    /** Any change object, dispatched on its tag (begin, commit, rollback, data and schema changes). */
    public static Change change(Object value, JsonPath p) {
        String tag = tagOf(value, p);
        return switch (tag) {
            case Begin.TAG -> begin(value, p);
            case Commit.TAG -> commit(value, p);
            case Rollback.TAG -> rollback(value, p);
            default -> dataOrSchemaChange(value, p);
        };
    }

    static DataOrSchemaChange dataOrSchemaChange(Object value, JsonPath p) {
        String tag = tagOf(value, p);
        ObjectReader r;
        switch (tag) {
            case Insert.TAG:
                r = new ObjectReader(value, p, Shapes.INSERT);
                return new Insert(r.req("relation", "object", ModelDecoder::relation), r.reqObject("new"),
                        r.passthrough());
            case Update.TAG:
                r = new ObjectReader(value, p, Shapes.UPDATE);
                return new Update(r.req("relation", "object", ModelDecoder::relation),
                        r.reqNullableObject("key"), r.reqObject("new"), r.passthrough());
            case Delete.TAG:
                r = new ObjectReader(value, p, Shapes.DELETE);
                return new Delete(r.req("relation", "object", ModelDecoder::relation), r.reqObject("key"),
                        r.passthrough());
            case Truncate.TAG:
                r = new ObjectReader(value, p, Shapes.TRUNCATE);
                return new Truncate(r.reqList("relations", ModelDecoder::relation), r.passthrough());
            case Backfill.TAG:
                r = new ObjectReader(value, p, Shapes.BACKFILL);
                return new Backfill(r.req("relation", "object", ModelDecoder::newRelation),
                        r.reqStrings("columns"), r.reqString("watermark"),
                        r.reqList("rowValues", ModelDecoder::row), r.opt("status", ModelDecoder::downloadStatus),
                        r.passthrough());
            case BackfillCompleted.TAG:
                r = new ObjectReader(value, p, Shapes.BACKFILL_COMPLETED);
                return new BackfillCompleted(r.req("relation", "object", ModelDecoder::newRelation),
                        r.reqStrings("columns"), r.reqString("watermark"),
                        r.opt("status", ModelDecoder::downloadStatus), r.passthrough());
            case CreateTable.TAG:
                r = new ObjectReader(value, p, Shapes.CREATE_TABLE);
                return new CreateTable(r.req("spec", "object", ModelDecoder::tableSpec),
                        r.opt("metadata", ModelDecoder::tableMetadata),
                        r.optRecord("backfill", ModelDecoder::backfillId), r.passthrough());
            case org.zrm.protocol.RenameTable.TAG:
                r = new ObjectReader(value, p, Shapes.RENAME_TABLE);
                return new RenameTable(r.req("old", "object", ModelDecoder::identifier),
                        r.req("new", "object", ModelDecoder::identifier), r.passthrough());
            case UpdateTableMetadata.TAG:
                r = new ObjectReader(value, p, Shapes.UPDATE_TABLE_METADATA);
                return new UpdateTableMetadata(r.req("table", "object", ModelDecoder::identifier),
                        r.req("old", "object", ModelDecoder::tableMetadata),
                        r.req("new", "object", ModelDecoder::tableMetadata), r.passthrough());
            case AddColumn.TAG:
                r = new ObjectReader(value, p, Shapes.ADD_COLUMN);
                return new AddColumn(r.req("table", "object", ModelDecoder::identifier),
                        r.req("column", "object", ModelDecoder::namedColumn),
                        r.opt("tableMetadata", ModelDecoder::tableMetadata),
                        r.opt("backfill", ModelDecoder::backfillId), r.passthrough());
            case UpdateColumn.TAG:
                r = new ObjectReader(value, p, Shapes.UPDATE_COLUMN);
                return new UpdateColumn(r.req("table", "object", ModelDecoder::identifier),
                        r.req("old", "object", ModelDecoder::namedColumn),
                        r.req("new", "object", ModelDecoder::namedColumn), r.passthrough());
            case DropColumn.TAG:
                r = new ObjectReader(value, p, Shapes.DROP_COLUMN);
                return new DropColumn(r.req("table", "object", ModelDecoder::identifier),
                        r.reqString("column"), r.passthrough());
            case DropTable.TAG:
                r = new ObjectReader(value, p, Shapes.DROP_TABLE);
                return new DropTable(r.req("id", "object", ModelDecoder::identifier), r.passthrough());
            case CreateIndex.TAG:
                r = new ObjectReader(value, p, Shapes.CREATE_INDEX);
                return new CreateIndex(r.req("spec", "object", ModelDecoder::indexSpec), r.passthrough());
            case DropIndex.TAG:
                r = new ObjectReader(value, p, Shapes.DROP_INDEX);
                return new DropIndex(r.req("id", "object", ModelDecoder::identifier), r.passthrough());
            default:
                throw new ProtocolException(p.key("tag").toString(), "unknown change tag \"" + tag + "\"");
        }
    }

    private static String tagOf(Object value, JsonPath p) {
        return new ObjectReader(value, p, Shapes.ROLLBACK).reqString("tag");
    }

    static Begin begin(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.BEGIN);
        r.reqTag(Begin.TAG);
        return new Begin(r.optEnum("json", JsonFormat::fromWire, "\"p\", \"s\""), r.optBoolean("skipAck"),
                r.passthrough());
    }

    static Commit commit(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.COMMIT);
        r.reqTag(Commit.TAG);
        return new Commit(r.passthrough());
    }

    static Rollback rollback(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.ROLLBACK);
        r.reqTag(Rollback.TAG);
        return new Rollback(r.passthrough());
    }

    static ResetRequired resetRequired(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.RESET_REQUIRED);
        r.reqTag(ResetRequired.TAG);
        return new ResetRequired(r.optString("message"), r.optObject("errorDetails"), r.passthrough());
    }

    static DownstreamStatus downstreamStatus(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.DOWNSTREAM_STATUS);
        return new DownstreamStatus(r.optBoolean("ack"), r.opt("lagReport", ModelDecoder::fullLagReport),
                r.passthrough());
    }

    // ---------------------------------------------------------------- parts

    static Relation relation(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.RELATION);
        String schema = r.reqString("schema");
        String name = r.reqString("name");
        RowKey rowKey = r.opt("rowKey", ModelDecoder::rowKey);
        List<String> keyColumns = r.optStrings("keyColumns");
        ReplicaIdentity identity = r.optEnum("replicaIdentity", ReplicaIdentity::fromWire, REPLICA_IDENTITIES);
        if (rowKey == null && keyColumns == null) {
            // upstream's relation schema derives rowKey from keyColumns and fails without either
            throw new ProtocolException(p.key("rowKey").toString(), "missing required object (or keyColumns)");
        }
        return new Relation(schema, name, rowKey, keyColumns, identity, r.passthrough());
    }

    /** A relation in backfill messages, where {@code rowKey} is required. */
    static Relation newRelation(Object value, JsonPath p) {
        new ObjectReader(value, p, Shapes.RELATION).reqRaw("rowKey", "object");
        return relation(value, p);
    }

    static RowKey rowKey(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.ROW_KEY);
        return new RowKey(r.reqStrings("columns"),
                r.optEnum("type", ReplicaIdentity::fromWire, REPLICA_IDENTITIES), r.passthrough());
    }

    static Identifier identifier(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.IDENTIFIER);
        return new Identifier(r.reqString("schema"), r.reqString("name"), r.passthrough());
    }

    static TableMetadata tableMetadata(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.TABLE_METADATA);
        return new TableMetadata(r.reqObject("rowKey"), r.passthrough());
    }

    static BackfillId backfillId(Object value, JsonPath p) {
        return new BackfillId(ObjectReader.Values.object(value, p));
    }

    static ColumnSpec columnSpec(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.COLUMN_SPEC);
        return new ColumnSpec(r.reqLong("pos"), r.reqString("dataType"),
                r.optEnum("pgTypeClass", PgTypeClass::fromWire, PG_TYPE_CLASSES),
                r.maybeEnum("elemPgTypeClass", PgTypeClass::fromWire, PG_TYPE_CLASSES),
                r.maybeLong("characterMaximumLength"), r.maybeBoolean("notNull"), r.maybeString("dflt"),
                r.passthrough());
    }

    static TableSpec tableSpec(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.TABLE_SPEC);
        return new TableSpec(r.reqString("schema"), r.reqString("name"),
                r.reqRecord("columns", ModelDecoder::columnSpec), r.optStrings("primaryKey"), r.passthrough());
    }

    static IndexSpec indexSpec(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.INDEX_SPEC);
        return new IndexSpec(r.reqString("schema"), r.reqString("tableName"), r.reqString("name"),
                r.reqBoolean("unique"), r.reqRecord("columns", ModelDecoder::direction), r.passthrough());
    }

    private static IndexDirection direction(Object value, JsonPath p) {
        return ObjectReader.Values.enumValue(ObjectReader.Values.string(value, p), IndexDirection::fromWire,
                "\"ASC\", \"DESC\"", p);
    }

    static NamedColumn namedColumn(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.NAMED_COLUMN);
        return new NamedColumn(r.reqString("name"), r.req("spec", "object", ModelDecoder::columnSpec),
                r.passthrough());
    }

    static DownloadStatus downloadStatus(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.DOWNLOAD_STATUS);
        return new DownloadStatus(r.reqLong("rows"), r.reqLong("totalRows"), r.optLong("totalBytes"),
                r.passthrough());
    }

    static Timings timings(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.TIMINGS);
        return new Timings(r.reqDouble("sendTimeMs"), r.reqDouble("commitTimeMs"), r.reqDouble("receiveTimeMs"),
                r.passthrough());
    }

    /** Change-source lag report: {@code lastTimings} required. */
    static LagReport fullLagReport(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.LAG_REPORT);
        return new LagReport(r.req("lastTimings", "object", ModelDecoder::timings), r.reqDouble("nextSendTimeMs"),
                r.passthrough());
    }

    /** Subscriber lag report: {@code lastTimings} optional. */
    static LagReport lagReport(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.LAG_REPORT);
        return new LagReport(r.opt("lastTimings", ModelDecoder::timings), r.reqDouble("nextSendTimeMs"),
                r.passthrough());
    }

    private static List<Object> row(Object value, JsonPath p) {
        return ObjectReader.Values.array(value, p);
    }

    // ---------------------------------------------------------------- other documents

    public static BackfillRequest backfillRequest(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.BACKFILL_REQUEST);
        return new BackfillRequest(r.req("table", "object", ModelDecoder::backfillRequestTable),
                r.reqRecord("columns", ModelDecoder::backfillId), r.passthrough());
    }

    private static BackfillRequest.Table backfillRequestTable(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.BACKFILL_REQUEST_TABLE);
        Object metadata = r.reqRaw("metadata", "object or null");
        return new BackfillRequest.Table(r.reqString("schema"), r.reqString("name"),
                metadata == null ? null : tableMetadata(metadata, p.key("metadata")), r.passthrough());
    }

    static StreamerStatus streamerStatus(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.STREAMER_STATUS);
        r.reqTag(StreamerStatus.TAG);
        return new StreamerStatus(r.opt("lagReport", ModelDecoder::lagReport), r.passthrough());
    }

    static SubscriptionError subscriptionError(Object value, JsonPath p) {
        ObjectReader r = new ObjectReader(value, p, Shapes.SUBSCRIPTION_ERROR);
        long code = r.reqLong("type");
        ErrorType type = ErrorType.fromCode(code);
        if (type == null) {
            throw new ProtocolException(p.key("type").toString(), "unknown error type " + code + ", expected 0, 1 or 2");
        }
        return new SubscriptionError(type, r.optString("message"), r.passthrough());
    }

}
