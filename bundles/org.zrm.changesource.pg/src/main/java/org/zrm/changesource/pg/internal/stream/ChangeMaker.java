package org.zrm.changesource.pg.internal.stream;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage.RelationInfo;
import org.zrm.protocol.Begin;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.Commit;
import org.zrm.protocol.Delete;
import org.zrm.protocol.Insert;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.ResetRequired;
import org.zrm.protocol.Rollback;
import org.zrm.protocol.Truncate;
import org.zrm.protocol.Update;
import org.zrm.watermark.Lsn;

/**
 * Converts pgoutput messages into change-source protocol messages exactly as upstream's
 * {@code ChangeMaker} does (spec §3.1): begin/commit bodies spread from the pgoutput message with
 * {@code json:"s"}, commit watermark {@code lexi(commitLsn)}, relations without their column list,
 * {@code key = old ?? key} for updates and deletes.
 *
 * <p><b>Sticky failure.</b> The first conversion error yields {@code rollback} +
 * {@code reset-required} and every later message yields nothing (logged at most once a minute),
 * while the stream keeps being drained; throwing instead would make the streamer reconnect and
 * replay the same failure forever. The one exception is a {@link TransientUpstreamException} (an
 * upstream query failed, the message itself is fine): it propagates and ends the stream with a
 * retryable failure. Not thread-safe: used by the pump thread only.
 */
public final class ChangeMaker {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeMaker.class);
    private static final long ERROR_LOG_INTERVAL_MS = 60_000;

    private final String shardPrefix;
    private final DdlMessageHandler ddl;
    private final RelationHandler relations;
    private Failure failure;

    /**
     * @param appId the app id
     * @param shardNum the shard number
     * @param ddl handles the shard's DDL event messages
     */
    public ChangeMaker(String appId, int shardNum, DdlMessageHandler ddl) {
        this(appId, shardNum, ddl, RelationHandler.IGNORE);
    }

    /**
     * @param appId the app id
     * @param shardNum the shard number
     * @param ddl handles the shard's DDL event messages
     * @param relations handles pgoutput Relation messages (degraded-mode checks)
     */
    public ChangeMaker(String appId, int shardNum, DdlMessageHandler ddl, RelationHandler relations) {
        this.shardPrefix = appId + "/" + shardNum;
        this.ddl = Objects.requireNonNull(ddl, "ddl");
        this.relations = Objects.requireNonNull(relations, "relations");
    }

    /** @return whether a conversion error has stopped this change maker */
    public boolean failed() {
        return failure != null;
    }

    /**
     * @param lsn the message's stream position
     * @param msg the pgoutput message
     * @return the protocol messages to emit, in order (often one, possibly none)
     * @throws TransientUpstreamException if an upstream query needed for the conversion failed
     */
    public List<ChangeStreamMessage> makeChanges(long lsn, PgOutputMessage msg) {
        if (failure != null) {
            logFailure();
            return List.of();
        }
        try {
            return convert(lsn, msg);
        } catch (TransientUpstreamException e) {
            // Not a problem of the message: end the stream retryably, the message comes again.
            throw e;
        } catch (RuntimeException e) {
            return fail(lsn, msg.getClass().getSimpleName(), e);
        }
    }

    /**
     * Stops the change maker because a message at {@code lsn} could not even be parsed (e.g. a value
     * in a format we cannot convert); same outcome as a conversion error.
     */
    public List<ChangeStreamMessage> fail(long lsn, String what, RuntimeException e) {
        if (failure != null) {
            logFailure();
            return List.of();
        }
        String message = "Unable to continue replication from LSN " + Lsn.of(lsn);
        failure = new Failure(message, what, e);
        logFailure();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("error", message);
        if (e instanceof UnsupportedSchemaChangeException u) {
            // As upstream: the bare description, plus the trigger context with the offending query.
            details.put("reason", u.description());
            details.put("context", u.context());
        } else {
            details.put("reason", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        // Roll back the open transaction so no consumer is left with a dangling one.
        return List.of(new ChangeStreamMessage.RollbackMessage(new Rollback()),
                new ChangeStreamMessage.ControlMessage(new ResetRequired(message, details, Passthrough.NONE)));
    }

    private void logFailure() {
        long now = System.currentTimeMillis();
        if (now - failure.lastLogMs > ERROR_LOG_INTERVAL_MS) {
            failure.lastLogMs = now;
            LOG.error("{}: {} while converting {}{}; the replica must be reset (further changes are dropped)",
                    failure.message, failure.error.toString(), failure.what,
                    failure.error instanceof UnsupportedSchemaChangeException u ? " (context " + u.context() + ")" : "",
                    failure.error);
        }
    }

    private List<ChangeStreamMessage> convert(long lsn, PgOutputMessage msg) {
        if (msg instanceof PgOutputMessage.Begin b) {
            LinkedHashMap<String, Object> body = new LinkedHashMap<>(4);
            body.put("commitLsn", lsnText(b.commitLsn()));
            body.put("commitTime", b.commitTimeMicros());
            body.put("xid", b.xid());
            return List.of(new BeginMessage(new Begin(JsonFormat.STRINGIFIED, null, Passthrough.of(body)),
                    watermark(b.commitLsn())));
        } else if (msg instanceof PgOutputMessage.Commit c) {
            ddl.beforeCommit();
            LinkedHashMap<String, Object> body = new LinkedHashMap<>(5);
            body.put("flags", (long) c.flags());
            body.put("commitLsn", lsnText(c.commitLsn()));
            body.put("commitEndLsn", lsnText(c.commitEndLsn()));
            body.put("commitTime", c.commitTimeMicros());
            return List.of(new CommitMessage(new Commit(Passthrough.of(body)), watermark(c.commitLsn())));
        } else if (msg instanceof PgOutputMessage.Insert i) {
            return List.of(new DataMessage(new Insert(i.relation().protocolRelation(), i.newRow(), Passthrough.NONE)));
        } else if (msg instanceof PgOutputMessage.Update u) {
            Map<String, Object> key = u.old() != null ? u.old() : u.key();
            return List.of(new DataMessage(new Update(u.relation().protocolRelation(), key, u.newRow(),
                    oldMember(u.old()))));
        } else if (msg instanceof PgOutputMessage.Delete d) {
            Map<String, Object> key = d.old() != null ? d.old() : d.key();
            if (key == null) {
                throw new IllegalArgumentException("Invalid DELETE msg (missing key) for "
                        + d.relation().schema() + "." + d.relation().name());
            }
            return List.of(new DataMessage(new Delete(d.relation().protocolRelation(), key, oldMember(d.old()))));
        } else if (msg instanceof PgOutputMessage.Truncate t) {
            List<org.zrm.protocol.Relation> rels = new ArrayList<>(t.relations().size());
            for (RelationInfo r : t.relations()) {
                rels.add(r.protocolRelation());
            }
            LinkedHashMap<String, Object> extra = new LinkedHashMap<>(2);
            extra.put("cascade", t.cascade());
            extra.put("restartIdentity", t.restartIdentity());
            return List.of(new DataMessage(new Truncate(rels, Passthrough.of(extra))));
        } else if (msg instanceof PgOutputMessage.Message m) {
            return message(lsn, m);
        } else if (msg instanceof PgOutputMessage.Relation r) {
            return relations.handle(r);
        }
        // Type and Origin carry nothing the protocol needs.
        return List.of();
    }

    private List<ChangeStreamMessage> message(long lsn, PgOutputMessage.Message m) {
        if (!m.prefix().startsWith(shardPrefix)) {
            LOG.debug("ignoring logical message for a different shard: {}", m.prefix());
            return List.of();
        }
        String suffix = m.prefix().substring(shardPrefix.length());
        if (suffix.isEmpty() || suffix.equals("/ddl")) {
            return ddl.handle(lsn, m);
        }
        LOG.debug("ignoring unknown logical message type {}", m.prefix());
        return List.of();
    }

    private static Passthrough oldMember(Map<String, Object> old) {
        LinkedHashMap<String, Object> m = new LinkedHashMap<>(2);
        m.put("old", old);
        return Passthrough.of(m);
    }

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    /** {@code %08X/%08X} as pgoutput-parsed LSNs are rendered; {@code 0/0} is {@code null}. Hot path: no String.format. */
    static String lsnText(long lsn) {
        if (lsn == 0) {
            return null;
        }
        char[] c = new char[17];
        for (int i = 0; i < 8; i++) {
            c[i] = HEX[(int) (lsn >>> (60 - 4 * i)) & 0xF];
            c[9 + i] = HEX[(int) (lsn >>> (28 - 4 * i)) & 0xF];
        }
        c[8] = '/';
        return new String(c);
    }

    // Begin and commit of a transaction carry the same commit LSN: encode its watermark once.
    private long lastWatermarkLsn;
    private String lastWatermark;

    private String watermark(long lsn) {
        if (lastWatermark == null || lsn != lastWatermarkLsn) {
            lastWatermark = Lsn.of(lsn).toWatermark();
            lastWatermarkLsn = lsn;
        }
        return lastWatermark;
    }

    private static final class Failure {
        final String message;
        final String what;
        final RuntimeException error;
        long lastLogMs;

        Failure(String message, String what, RuntimeException error) {
            this.message = message;
            this.what = what;
            this.error = error;
        }
    }
}
