package org.zrm.protocol.json.internal;

import java.util.Map;
import org.zrm.protocol.AddColumn;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillCompleted;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.Begin;
import org.zrm.protocol.Change;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.Commit;
import org.zrm.protocol.CreateIndex;
import org.zrm.protocol.CreateTable;
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
import org.zrm.protocol.LagReport;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.NamedColumn;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.RenameTable;
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
import org.zrm.protocol.UpstreamStatusBody;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.SnapshotStatus;
import org.zrm.protocol.subscriber.StreamerStatus;
import org.zrm.protocol.subscriber.SubscriptionError;

/** Writes the protocol records as JSON, member by member. Stateless. */
public final class ModelEncoder {

    private ModelEncoder() {}

    // ---------------------------------------------------------------- tuples

    public static void changeStreamMessage(JsonWriter w, ChangeStreamMessage msg) {
        w.beginArray().string(msg.type());
        if (msg instanceof ChangeStreamMessage.BeginMessage m) {
            begin(w, m.begin());
            trailer(w, "commitWatermark", m.commitWatermark(), m.trailerExtra(), Shapes.COMMIT_WATERMARK);
        } else if (msg instanceof ChangeStreamMessage.DataMessage m) {
            change(w, m.change());
        } else if (msg instanceof ChangeStreamMessage.CommitMessage m) {
            commit(w, m.commit());
            trailer(w, "watermark", m.watermark(), m.trailerExtra(), Shapes.WATERMARK);
        } else if (msg instanceof ChangeStreamMessage.RollbackMessage m) {
            rollback(w, m.rollback());
        } else if (msg instanceof ChangeStreamMessage.ControlMessage m) {
            resetRequired(w, m.control());
        } else if (msg instanceof ChangeStreamMessage.StatusMessage m) {
            downstreamStatus(w, m.status());
            trailer(w, "watermark", m.watermark(), m.trailerExtra(), Shapes.WATERMARK);
        } else {
            throw new IllegalStateException("unhandled message " + msg.getClass());
        }
        w.endArray();
    }

    public static void downstream(JsonWriter w, Downstream msg) {
        if (msg instanceof Downstream.ChangeMessage m) {
            changeStreamMessage(w, m.data());
        } else if (msg instanceof Downstream.StatusMessage m) {
            w.beginArray().string(Downstream.StatusMessage.TYPE);
            streamerStatus(w, m.status());
            w.endArray();
        } else if (msg instanceof Downstream.ErrorMessage m) {
            w.beginArray().string(Downstream.ErrorMessage.TYPE);
            subscriptionError(w, m.error());
            w.endArray();
        } else {
            throw new IllegalStateException("unhandled message " + msg.getClass());
        }
    }

    public static void changeSourceUpstream(JsonWriter w, ChangeSourceUpstream msg) {
        w.beginArray().string(ChangeSourceUpstream.TYPE);
        UpstreamStatusBody body = msg.body();
        if (body instanceof Commit c) {
            commit(w, c);
        } else {
            downstreamStatus(w, (DownstreamStatus) body);
        }
        trailer(w, "watermark", msg.watermark(), msg.trailerExtra(), Shapes.WATERMARK);
        w.endArray();
    }

    public static void snapshotStatus(JsonWriter w, SnapshotStatus s) {
        w.beginArray().string(SnapshotStatus.TAG);
        ObjectEncoder.write(w, s, Shapes.SNAPSHOT_STATUS, s.extra(), (o, name, out) -> switch (name) {
            case "tag" -> put(out, name, SnapshotStatus.TAG);
            case "backupURL" -> put(out, name, o.backupURL());
            case "replicaVersion" -> put(out, name, o.replicaVersion());
            case "minWatermark" -> put(out, name, o.minWatermark());
            default -> false;
        });
        w.endArray();
    }

    private static void trailer(JsonWriter w, String member, String value, Passthrough extra, Shape shape) {
        ObjectEncoder.write(w, value, shape, extra, (o, name, out) -> name.equals(member) && put(out, name, o));
    }

    // ---------------------------------------------------------------- changes

    public static void change(JsonWriter w, Change change) {
        if (change instanceof Begin c) {
            begin(w, c);
        } else if (change instanceof Commit c) {
            commit(w, c);
        } else if (change instanceof Rollback c) {
            rollback(w, c);
        } else if (change instanceof Insert c) {
            ObjectEncoder.write(w, c, Shapes.INSERT, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "relation" -> relation(out.name(name), o.relation());
                case "new" -> json(out, name, o.newRow());
                default -> false;
            });
        } else if (change instanceof Update c) {
            ObjectEncoder.write(w, c, Shapes.UPDATE, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "relation" -> relation(out.name(name), o.relation());
                case "key" -> json(out, name, o.key());
                case "new" -> json(out, name, o.newRow());
                default -> false;
            });
        } else if (change instanceof Delete c) {
            ObjectEncoder.write(w, c, Shapes.DELETE, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "relation" -> relation(out.name(name), o.relation());
                case "key" -> json(out, name, o.key());
                default -> false;
            });
        } else if (change instanceof Truncate c) {
            ObjectEncoder.write(w, c, Shapes.TRUNCATE, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "relations" -> {
                    out.name(name).beginArray();
                    for (Relation r : o.relations()) {
                        relation(out, r);
                    }
                    out.endArray();
                    yield true;
                }
                default -> false;
            });
        } else if (change instanceof Backfill c) {
            ObjectEncoder.write(w, c, Shapes.BACKFILL, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "relation" -> relation(out.name(name), o.relation());
                case "columns" -> json(out, name, o.columns());
                case "watermark" -> put(out, name, o.watermark());
                case "rowValues" -> json(out, name, o.rowValues());
                case "status" -> o.status() == null || downloadStatus(out.name(name), o.status());
                default -> false;
            });
        } else if (change instanceof BackfillCompleted c) {
            ObjectEncoder.write(w, c, Shapes.BACKFILL_COMPLETED, c.extra(),
                    (o, name, out) -> switch (name) {
                        case "tag" -> put(out, name, o.tag());
                        case "relation" -> relation(out.name(name), o.relation());
                        case "columns" -> json(out, name, o.columns());
                        case "watermark" -> put(out, name, o.watermark());
                        case "status" -> o.status() == null || downloadStatus(out.name(name), o.status());
                        default -> false;
                    });
        } else if (change instanceof CreateTable c) {
            ObjectEncoder.write(w, c, Shapes.CREATE_TABLE, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "spec" -> tableSpec(out.name(name), o.spec());
                case "metadata" -> o.metadata() == null || tableMetadata(out.name(name), o.metadata());
                case "backfill" -> o.backfill() == null || backfillIds(out.name(name), o.backfill());
                default -> false;
            });
        } else if (change instanceof RenameTable c) {
            ObjectEncoder.write(w, c, Shapes.RENAME_TABLE, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "old" -> identifier(out.name(name), o.oldId());
                case "new" -> identifier(out.name(name), o.newId());
                default -> false;
            });
        } else if (change instanceof UpdateTableMetadata c) {
            ObjectEncoder.write(w, c, Shapes.UPDATE_TABLE_METADATA, c.extra(),
                    (o, name, out) -> switch (name) {
                        case "tag" -> put(out, name, o.tag());
                        case "table" -> identifier(out.name(name), o.table());
                        case "old" -> tableMetadata(out.name(name), o.oldMetadata());
                        case "new" -> tableMetadata(out.name(name), o.newMetadata());
                        default -> false;
                    });
        } else if (change instanceof AddColumn c) {
            ObjectEncoder.write(w, c, Shapes.ADD_COLUMN, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "table" -> identifier(out.name(name), o.table());
                case "column" -> namedColumn(out.name(name), o.column());
                case "tableMetadata" -> o.tableMetadata() == null || tableMetadata(out.name(name), o.tableMetadata());
                case "backfill" -> o.backfill() == null || json(out, name, o.backfill().value());
                default -> false;
            });
        } else if (change instanceof UpdateColumn c) {
            ObjectEncoder.write(w, c, Shapes.UPDATE_COLUMN, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "table" -> identifier(out.name(name), o.table());
                case "old" -> namedColumn(out.name(name), o.oldColumn());
                case "new" -> namedColumn(out.name(name), o.newColumn());
                default -> false;
            });
        } else if (change instanceof DropColumn c) {
            ObjectEncoder.write(w, c, Shapes.DROP_COLUMN, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "table" -> identifier(out.name(name), o.table());
                case "column" -> put(out, name, o.column());
                default -> false;
            });
        } else if (change instanceof DropTable c) {
            ObjectEncoder.write(w, c, Shapes.DROP_TABLE, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "id" -> identifier(out.name(name), o.id());
                default -> false;
            });
        } else if (change instanceof CreateIndex c) {
            ObjectEncoder.write(w, c, Shapes.CREATE_INDEX, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "spec" -> indexSpec(out.name(name), o.spec());
                default -> false;
            });
        } else if (change instanceof DropIndex c) {
            ObjectEncoder.write(w, c, Shapes.DROP_INDEX, c.extra(), (o, name, out) -> switch (name) {
                case "tag" -> put(out, name, o.tag());
                case "id" -> identifier(out.name(name), o.id());
                default -> false;
            });
        } else {
            throw new IllegalStateException("unhandled change " + change.getClass());
        }
    }

    private static void begin(JsonWriter w, Begin b) {
        ObjectEncoder.write(w, b, Shapes.BEGIN, b.extra(), (o, name, out) -> switch (name) {
            case "tag" -> put(out, name, Begin.TAG);
            case "json" -> o.json() == null || put(out, name, o.json().wire());
            case "skipAck" -> o.skipAck() == null || put(out, name, o.skipAck());
            default -> false;
        });
    }

    private static void commit(JsonWriter w, Commit c) {
        ObjectEncoder.write(w, c, Shapes.COMMIT, c.extra(), ModelEncoder::tagOnly);
    }

    private static void rollback(JsonWriter w, Rollback r) {
        ObjectEncoder.write(w, r, Shapes.ROLLBACK, r.extra(), ModelEncoder::tagOnly);
    }

    private static boolean tagOnly(Change c, String name, JsonWriter out) {
        return name.equals("tag") && put(out, name, c.tag());
    }

    private static void resetRequired(JsonWriter w, ResetRequired r) {
        ObjectEncoder.write(w, r, Shapes.RESET_REQUIRED, r.extra(), (o, name, out) -> switch (name) {
            case "tag" -> put(out, name, ResetRequired.TAG);
            case "message" -> o.message() == null || put(out, name, o.message());
            case "errorDetails" -> o.errorDetails() == null || json(out, name, o.errorDetails());
            default -> false;
        });
    }

    private static void downstreamStatus(JsonWriter w, DownstreamStatus s) {
        ObjectEncoder.write(w, s, Shapes.DOWNSTREAM_STATUS, s.extra(), (o, name, out) -> switch (name) {
            case "ack" -> o.ack() == null || put(out, name, o.ack());
            case "lagReport" -> o.lagReport() == null || lagReport(out.name(name), o.lagReport());
            default -> false;
        });
    }

    // ---------------------------------------------------------------- parts

    private static boolean relation(JsonWriter w, Relation rel) {
        RelationMemo memo = w.relations();
        if (memo == null) {
            writeRelation(w, rel);
        } else {
            w.raw(memo.json(rel, ModelEncoder::relationJson));
        }
        return true;
    }

    private static String relationJson(Relation rel) {
        JsonWriter w = new JsonWriter();
        writeRelation(w, rel);
        return w.toString();
    }

    private static void writeRelation(JsonWriter w, Relation rel) {
        ObjectEncoder.write(w, rel, Shapes.RELATION, rel.extra(), (o, name, out) -> switch (name) {
            case "schema" -> put(out, name, o.schema());
            case "name" -> put(out, name, o.name());
            case "rowKey" -> o.rowKey() == null || rowKey(out.name(name), o.rowKey());
            case "keyColumns" -> o.keyColumns() == null || json(out, name, o.keyColumns());
            case "replicaIdentity" -> o.replicaIdentity() == null || put(out, name, o.replicaIdentity().wire());
            default -> false;
        });
    }

    private static boolean rowKey(JsonWriter w, RowKey k) {
        ObjectEncoder.write(w, k, Shapes.ROW_KEY, k.extra(), (o, name, out) -> switch (name) {
            case "columns" -> json(out, name, o.columns());
            case "type" -> o.type() == null || put(out, name, o.type().wire());
            default -> false;
        });
        return true;
    }

    private static boolean identifier(JsonWriter w, Identifier id) {
        ObjectEncoder.write(w, id, Shapes.IDENTIFIER, id.extra(), (o, name, out) -> switch (name) {
            case "schema" -> put(out, name, o.schema());
            case "name" -> put(out, name, o.name());
            default -> false;
        });
        return true;
    }

    private static boolean tableMetadata(JsonWriter w, TableMetadata m) {
        ObjectEncoder.write(w, m, Shapes.TABLE_METADATA, m.extra(),
                (o, name, out) -> name.equals("rowKey") && json(out, name, o.rowKey()));
        return true;
    }

    private static boolean backfillIds(JsonWriter w, Map<String, BackfillId> ids) {
        w.beginObject();
        for (Map.Entry<String, BackfillId> e : JsObjectKeys.entries(ids)) {
            w.name(e.getKey()).value(e.getValue().value());
        }
        w.endObject();
        return true;
    }

    private static boolean columnSpec(JsonWriter w, ColumnSpec c) {
        ObjectEncoder.write(w, c, Shapes.COLUMN_SPEC, c.extra(), (o, name, out) -> switch (name) {
            case "pos" -> put(out, name, o.pos());
            case "dataType" -> put(out, name, o.dataType());
            case "pgTypeClass" -> o.pgTypeClass() == null || put(out, name, o.pgTypeClass().wire());
            case "elemPgTypeClass" -> maybe(out, name, o.elemPgTypeClass().isPresent()
                    ? Maybe.ofNullable(o.elemPgTypeClass().value() == null ? null : o.elemPgTypeClass().value().wire())
                    : Maybe.absent());
            case "characterMaximumLength" -> maybe(out, name, o.characterMaximumLength());
            case "notNull" -> maybe(out, name, o.notNull());
            case "dflt" -> maybe(out, name, o.dflt());
            default -> false;
        });
        return true;
    }

    private static boolean tableSpec(JsonWriter w, TableSpec t) {
        ObjectEncoder.write(w, t, Shapes.TABLE_SPEC, t.extra(), (o, name, out) -> switch (name) {
            case "schema" -> put(out, name, o.schema());
            case "name" -> put(out, name, o.name());
            case "columns" -> {
                out.name(name).beginObject();
                for (Map.Entry<String, ColumnSpec> e : JsObjectKeys.entries(o.columns())) {
                    columnSpec(out.name(e.getKey()), e.getValue());
                }
                out.endObject();
                yield true;
            }
            case "primaryKey" -> o.primaryKey() == null || json(out, name, o.primaryKey());
            default -> false;
        });
        return true;
    }

    private static boolean indexSpec(JsonWriter w, IndexSpec s) {
        ObjectEncoder.write(w, s, Shapes.INDEX_SPEC, s.extra(), (o, name, out) -> switch (name) {
            case "schema" -> put(out, name, o.schema());
            case "tableName" -> put(out, name, o.tableName());
            case "name" -> put(out, name, o.name());
            case "unique" -> put(out, name, o.unique());
            case "columns" -> {
                out.name(name).beginObject();
                for (Map.Entry<String, IndexDirection> e : JsObjectKeys.entries(o.columns())) {
                    out.name(e.getKey()).string(e.getValue().wire());
                }
                out.endObject();
                yield true;
            }
            default -> false;
        });
        return true;
    }

    private static boolean namedColumn(JsonWriter w, NamedColumn c) {
        ObjectEncoder.write(w, c, Shapes.NAMED_COLUMN, c.extra(), (o, name, out) -> switch (name) {
            case "name" -> put(out, name, o.name());
            case "spec" -> columnSpec(out.name(name), o.spec());
            default -> false;
        });
        return true;
    }

    private static boolean downloadStatus(JsonWriter w, DownloadStatus s) {
        ObjectEncoder.write(w, s, Shapes.DOWNLOAD_STATUS, s.extra(), (o, name, out) -> switch (name) {
            case "rows" -> put(out, name, o.rows());
            case "totalRows" -> put(out, name, o.totalRows());
            case "totalBytes" -> o.totalBytes() == null || put(out, name, o.totalBytes());
            default -> false;
        });
        return true;
    }

    private static boolean timings(JsonWriter w, Timings t) {
        ObjectEncoder.write(w, t, Shapes.TIMINGS, t.extra(), (o, name, out) -> switch (name) {
            case "sendTimeMs" -> num(out, name, o.sendTimeMs());
            case "commitTimeMs" -> num(out, name, o.commitTimeMs());
            case "receiveTimeMs" -> num(out, name, o.receiveTimeMs());
            default -> false;
        });
        return true;
    }

    private static boolean lagReport(JsonWriter w, LagReport r) {
        ObjectEncoder.write(w, r, Shapes.LAG_REPORT, r.extra(), (o, name, out) -> switch (name) {
            case "lastTimings" -> o.lastTimings() == null || timings(out.name(name), o.lastTimings());
            case "nextSendTimeMs" -> num(out, name, o.nextSendTimeMs());
            default -> false;
        });
        return true;
    }

    // ---------------------------------------------------------------- other documents

    public static void backfillRequest(JsonWriter w, BackfillRequest req) {
        ObjectEncoder.write(w, req, Shapes.BACKFILL_REQUEST, req.extra(), (o, name, out) -> switch (name) {
            case "table" -> {
                BackfillRequest.Table t = o.table();
                out.name(name);
                ObjectEncoder.write(out, t, Shapes.BACKFILL_REQUEST_TABLE, t.extra(), (tt, n, o2) -> switch (n) {
                    case "schema" -> put(o2, n, tt.schema());
                    case "name" -> put(o2, n, tt.name());
                    case "metadata" -> tt.metadata() == null ? json(o2, n, null) : tableMetadata(o2.name(n), tt.metadata());
                    default -> false;
                });
                yield true;
            }
            case "columns" -> backfillIds(out.name(name), o.columns());
            default -> false;
        });
    }

    private static void streamerStatus(JsonWriter w, StreamerStatus s) {
        ObjectEncoder.write(w, s, Shapes.STREAMER_STATUS, s.extra(), (o, name, out) -> switch (name) {
            case "tag" -> put(out, name, StreamerStatus.TAG);
            case "lagReport" -> o.lagReport() == null || lagReport(out.name(name), o.lagReport());
            default -> false;
        });
    }

    private static void subscriptionError(JsonWriter w, SubscriptionError e) {
        ObjectEncoder.write(w, e, Shapes.SUBSCRIPTION_ERROR, e.extra(), (o, name, out) -> switch (name) {
            case "type" -> put(out, name, o.type().code());
            case "message" -> o.message() == null || put(out, name, o.message());
            default -> false;
        });
    }

    // ---------------------------------------------------------------- member helpers (all return true)

    private static boolean put(JsonWriter w, String name, String v) {
        w.name(name).string(v);
        return true;
    }

    private static boolean put(JsonWriter w, String name, boolean v) {
        w.name(name).bool(v);
        return true;
    }

    private static boolean put(JsonWriter w, String name, long v) {
        w.name(name).integer(v);
        return true;
    }

    private static boolean num(JsonWriter w, String name, double v) {
        w.name(name).number(v);
        return true;
    }

    private static boolean json(JsonWriter w, String name, Object v) {
        w.name(name).value(v);
        return true;
    }

    private static boolean maybe(JsonWriter w, String name, Maybe<?> v) {
        if (v.isPresent()) {
            w.name(name).value(v.value());
        }
        return true;
    }

}
