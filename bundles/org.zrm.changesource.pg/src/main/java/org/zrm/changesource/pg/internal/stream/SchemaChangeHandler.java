package org.zrm.changesource.pg.internal.stream;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.ReplicaIdentityFix;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.setup.UnsupportedTableSchemaException;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.SchemaChange;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.secret.Secrets;
import org.zrm.watermark.Lsn;

/**
 * Turns the shard's DDL event messages into schema changes (spec §4.5, upstream
 * {@code ChangeMaker#handleDdlMessage}). The changes are emitted where the message sits in its
 * transaction, so they are committed or rolled back with the data around them.
 *
 * <p><b>State.</b> The previous event is kept for the whole stream, across transactions: it
 * supplies the previous schema of events without {@code previousSchema} (triggers before shard
 * v21) and the command tag of nested events. Event triggers can nest (an event trigger running
 * DDL of its own, e.g. one enabling row-level security after CREATE TABLE, gives
 * start → start → end → end); the command that decides about backfills is the tag of the
 * preceding {@code ddlStart} if there is one, else the tag of a {@code ddlUpdate}, else
 * {@code UNKNOWN} (which backfills, the safe choice).
 *
 * <p><b>Replica identity fix.</b> A table without primary key but with a unique, immediate index
 * over NOT NULL columns gets that index as REPLICA IDENTITY (as at setup), so its updates and
 * deletes can be replicated. The ALTER runs {@value #REPLICA_IDENTITY_DELAY_MS} ms after the event
 * on the given executor, with an ordinary connection; waiting lets the user's transaction commit
 * first, and the next DDL event cancels a pending fix because its own schema supersedes it. At
 * most one fix is pending, so the executor's queue holds at most one task from this handler.
 * Failures are logged, never thrown into the stream.
 *
 * <p>Not thread-safe: {@link #handle} runs on the stream's pump thread only.
 */
public final class SchemaChangeHandler implements DdlMessageHandler {

    private static final Logger LOG = LoggerFactory.getLogger(SchemaChangeHandler.class);

    /** Upstream's {@code SET_REPLICA_IDENTITY_DELAY_MS}. */
    public static final long REPLICA_IDENTITY_DELAY_MS = 50;

    /** Opens an ordinary (non-replication) connection to the upstream database. */
    @FunctionalInterface
    public interface Db {
        Connection open() throws SQLException;
    }

    private final ProtocolCodec codec;
    private final TableValidator validator;
    private final SchemaDiff diff;
    private final ScheduledExecutorService executor;
    private final Db db;

    private DdlEvent lastEvent;
    private ScheduledFuture<?> pendingFix;
    /** The row-key violation of the open transaction's latest schema, checked when it commits. */
    private UnsupportedSchemaChangeException keylessAtCommit;

    /**
     * @param codec JSON codec
     * @param validator validates the tables of each new schema (the initial-sync setting)
     * @param executor runs the delayed replica-identity fix
     * @param db connections for the fix
     */
    public SchemaChangeHandler(ProtocolCodec codec, TableValidator validator, ScheduledExecutorService executor,
            Db db) {
        this.codec = Objects.requireNonNull(codec, "codec");
        this.validator = Objects.requireNonNull(validator, "validator");
        // The row-key rule is checked at commit (beforeCommit), every other rule at each event.
        this.diff = new SchemaDiff(validator.withoutRowKeyRule(), codec);
        this.executor = Objects.requireNonNull(executor, "executor");
        this.db = Objects.requireNonNull(db, "db");
    }

    @Override
    public List<ChangeStreamMessage> handle(long lsn, PgOutputMessage.Message message) {
        DdlEvent event = DdlEvent.parse(new String(message.content(), StandardCharsets.UTF_8), codec);
        // A new schema change supersedes a fix computed from an older schema.
        cancelPendingFix();
        if (!event.known()) {
            LOG.info("ignoring DDL event of unknown type {} from {} at {}", event.type(), message.prefix(), Lsn.of(lsn));
            return List.of();
        }
        DdlEvent prevEvent = lastEvent;
        lastEvent = event;
        PublishedSchema prevSchema = event.previousSchemaPresent() ? event.previousSchema()
                : prevEvent == null ? null : prevEvent.schema();
        if (prevSchema == null) {
            LOG.info("received {}/{} event at {} (tag {}, no schema change, {} tables, {} indexes)", message.prefix(),
                    event.type(), Lsn.of(lsn), event.tag(), event.schema().tables().size(),
                    event.schema().indexes().size());
            return List.of();
        }
        String tag = effectiveTag(prevEvent, event);
        List<SchemaChange> changes;
        try {
            changes = diff.diff(prevSchema, event.schema(), tag);
        } catch (RuntimeException e) {
            throw new UnsupportedSchemaChangeException(describe(e), event.context(), e);
        }
        LOG.info("processed {} command from {}/{} at {}: {} schema change(s) {} (query: {})", tag, message.prefix(),
                event.type(), Lsn.of(lsn), changes.size(), changes.stream().map(SchemaChange::tag).toList(),
                abbreviate(event.query()));
        List<ChangeStreamMessage> out = new ArrayList<>(changes.size());
        for (SchemaChange c : changes) {
            out.add(new DataMessage(c));
        }
        keylessAtCommit = keylessTable(event);
        scheduleFix(event.schema());
        return out;
    }

    /**
     * DECISION: ZRM's initial sync rejects a published table without a usable row key (zero-cache
     * only warns, and never syncs such a table to clients). The stream keeps that rule, but at
     * commit: {@code CREATE TABLE t(...); ALTER TABLE t ADD PRIMARY KEY (...)} in one transaction
     * is fine, and only a committed keyless table halts replication, with the same error a
     * re-sync would give.
     */
    @Override
    public void beforeCommit() {
        UnsupportedSchemaChangeException e = keylessAtCommit;
        keylessAtCommit = null;
        if (e != null) {
            throw e;
        }
    }

    private UnsupportedSchemaChangeException keylessTable(DdlEvent event) {
        if (!validator.requiresRowKey()) {
            return null;
        }
        PublishedSchema schema = event.schema();
        for (var table : schema.tables()) {
            var missing = validator.missingRowKey(table, schema.indexes());
            if (missing.isPresent()) {
                return new UnsupportedSchemaChangeException("UnsupportedTableSchemaError: " + missing.get(),
                        event.context(), new UnsupportedTableSchemaException(missing.get()));
            }
        }
        return null;
    }

    /**
     * The published schema of the last DDL event of this stream, or {@code null} before the
     * first: what degraded mode (no event triggers, spec §3.2) can compare Relation messages
     * with once a manual {@code update_schemas()} snapshot has been replicated. Pump thread only.
     */
    public PublishedSchema lastSchema() {
        return lastEvent == null ? null : lastEvent.schema();
    }

    /** The tag that decides backfills (see the class comment). */
    static String effectiveTag(DdlEvent prevEvent, DdlEvent event) {
        if (prevEvent != null && DdlEvent.DDL_START.equals(prevEvent.type())) {
            return prevEvent.tag();
        }
        if (DdlEvent.DDL_UPDATE.equals(event.type())) {
            return event.tag();
        }
        return "UNKNOWN";
    }

    /** JavaScript's {@code String(err)} of the error upstream would have thrown. */
    private static String describe(RuntimeException e) {
        String name = e instanceof UnsupportedTableSchemaException ? "UnsupportedTableSchemaError" : "Error";
        return name + ": " + e.getMessage();
    }

    private void cancelPendingFix() {
        if (pendingFix != null) {
            pendingFix.cancel(false);
            pendingFix = null;
        }
    }

    private void scheduleFix(PublishedSchema schema) {
        List<ReplicaIdentityFix> fixes = ReplicaIdentityFix.forTablesWithoutPrimaryKeys(schema);
        if (fixes.isEmpty()) {
            return;
        }
        try {
            pendingFix = executor.schedule(() -> applyFixes(fixes), REPLICA_IDENTITY_DELAY_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // The source is stopping; the next start's setup or DDL event computes the fix again.
            LOG.debug("replica identity fix not scheduled: {}", e.toString());
        }
    }

    private void applyFixes(List<ReplicaIdentityFix> fixes) {
        try (Connection c = db.open()) {
            for (ReplicaIdentityFix f : fixes) {
                f.apply(c);
            }
        } catch (SQLException | RuntimeException e) {
            LOG.warn("error setting replica identities: {}", Secrets.maskUrls(e.toString()), e);
        }
    }

    private static String abbreviate(String s) {
        if (s == null) {
            return null;
        }
        String oneLine = s.strip().replaceAll("\\s+", " ");
        return oneLine.length() <= 200 ? oneLine : oneLine.substring(0, 200) + "…";
    }
}
