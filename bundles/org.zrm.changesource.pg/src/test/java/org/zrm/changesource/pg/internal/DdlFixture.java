package org.zrm.changesource.pg.internal;

import static org.zrm.changesource.pg.internal.SourceFixture.createSlot;
import static org.zrm.changesource.pg.internal.SourceFixture.settings;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.pg.internal.setup.ShardConfig;
import org.zrm.changesource.pg.internal.setup.ShardSchema;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.pgcluster.PgCluster;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.DataMessage;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.testing.PgDatabase;

/**
 * A fresh database with the shard {@code zero_0} set up (event triggers included, so DDL messages
 * flow), a slot, and the change source streaming it: what the DDL tests share. Event triggers are
 * database-wide, so each fixture gets a database of its own.
 */
final class DdlFixture implements AutoCloseable {

    static final Duration T = Duration.ofSeconds(20);
    static final ProtocolCodec CODEC = SourceFixture.CODEC;

    final PgDatabase db;
    final Connection c;
    final PgChangeSource source;
    final PgChangeStream stream;

    private DdlFixture(PgDatabase db, Connection c, PgChangeSource source, PgChangeStream stream) {
        this.db = db;
        this.c = c;
        this.source = source;
        this.stream = stream;
    }

    /**
     * @param schema SQL run before the shard is set up
     * @param publications the shard's publications (empty = the default publication)
     * @param validator the source's DDL validation
     */
    static DdlFixture start(PgCluster cluster, String schema, List<String> publications, TableValidator validator)
            throws Exception {
        PgDatabase db = PgDatabase.create(cluster, "ddl");
        Connection c = null;
        PgChangeSource source = null;
        try {
            c = db.connect();
            SourceFixture.exec(c, schema);
            ShardSchema.ensureShardSchema(c, ShardConfig.of(SourceFixture.SHARD.appId(), SourceFixture.SHARD.shardNum(),
                    publications));
            List<String> pubs = ShardSchema.readInternalConfig(c, SourceFixture.SHARD).publications();
            // Slots are cluster-wide: one per database.
            String slot = db.name().toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_") + "_slot";
            String start = createSlot(c, slot);
            source = new PgChangeSource(settings(db.uri()), reset -> {
                throw new ChangeSourceException("not used by this test");
            }, validator);
            PgChangeStream stream = source.openStream(slot, pubs, start);
            return new DdlFixture(db, c, source, stream);
        } catch (Exception | Error e) {
            if (source != null) {
                source.stop();
            }
            if (c != null) {
                c.close();
            }
            db.close();
            throw e;
        }
    }

    static DdlFixture start(PgCluster cluster, String schema, List<String> publications) throws Exception {
        return start(cluster, schema, publications, TableValidator.strict());
    }

    void exec(String... sql) throws Exception {
        SourceFixture.exec(c, sql);
    }

    long oid(String table) throws Exception {
        return SourceFixture.oid(c, table);
    }

    /** The next transaction (begin … commit or rollback, plus a trailing control message if any), without statuses. */
    List<ChangeStreamMessage> nextTransaction() throws Exception {
        List<ChangeStreamMessage> out = SourceFixture.takeTransactions(stream, 1, T);
        if (out.get(out.size() - 1) instanceof ChangeStreamMessage.RollbackMessage) {
            out.addAll(SourceFixture.takeUntil(stream, m -> m instanceof ChangeStreamMessage.ControlMessage, T));
            out.removeIf(m -> m instanceof ChangeStreamMessage.StatusMessage);
        }
        return out;
    }

    /** The data messages of the next transaction that has any (transactions with DDL events only are skipped). */
    List<DataMessage> nextChanges() throws Exception {
        while (true) {
            List<DataMessage> data = data(nextTransaction());
            if (!data.isEmpty()) {
                return data;
            }
        }
    }

    /** The tags of {@link #nextChanges()}. */
    List<String> nextTags() throws Exception {
        return tags(nextChanges());
    }

    static List<DataMessage> data(List<ChangeStreamMessage> messages) {
        List<DataMessage> out = new ArrayList<>();
        for (ChangeStreamMessage m : messages) {
            if (m instanceof DataMessage d) {
                out.add(d);
            }
        }
        return out;
    }

    static List<String> tags(List<DataMessage> data) {
        return data.stream().map(d -> d.change().tag()).toList();
    }

    static String json(DataMessage d) {
        return CODEC.encodeChange(d.change());
    }

    @Override
    public void close() throws Exception {
        try {
            source.stop();
            c.close();
        } finally {
            db.close();
        }
    }
}
