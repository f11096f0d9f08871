package org.zrm.replica.apply;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.LiteTypes;
import org.zrm.replica.LiteNames;
import org.zrm.replica.ZqlType;

/**
 * The door from the exported sync package into the change processor: applies the snapshot
 * transaction inside the caller's SQLite transaction and describes the tables ZQL can sync.
 */
public final class InitialSyncApplier implements AutoCloseable {

    private final Connection db;
    private final ChangeProcessor processor;

    /**
     * @param db the new replica, inside the caller's transaction, with the {@code _zero.*} tables
     */
    public InitialSyncApplier(Connection db, ProtocolCodec codec) throws SQLException {
        this.db = db;
        this.processor = new ChangeProcessor(db, codec, ChangeProcessor.Mode.INITIAL_SYNC);
    }

    /**
     * Applies {@code begin}, {@code data} or {@code commit}.
     *
     * @return whether the message was the commit
     * @throws ChangeProcessingException if it could not be applied (the caller must discard the file)
     */
    public boolean apply(ChangeStreamData message) throws ChangeProcessingException, InterruptedException {
        return processor.process(message) != null;
    }

    /**
     * The tables clients can sync (upstream {@code computeZqlSpecs} with backfilling columns): those
     * with a unique key over non-null syncable columns, each with its columns of a ZQL type.
     *
     * @return lite table name to column name to ZQL type, in table order
     */
    public Map<String, Map<String, ZqlType>> zqlSpecs() throws SQLException {
        Map<String, Map<String, ZqlType>> out = new LinkedHashMap<>();
        for (LiteTableSpec t : ReplicaSchema.listTables(db).values()) {
            if (t.primaryKey().isEmpty()) {
                continue;
            }
            Map<String, ZqlType> cols = new LinkedHashMap<>();
            t.columns().forEach((name, type) -> {
                Optional<ZqlType> z = LiteNames.ZERO_VERSION_COLUMN.equals(name) ? Optional.empty() : LiteTypes.zqlType(type);
                z.ifPresent(v -> cols.put(name, v));
            });
            out.put(t.name(), cols);
        }
        return out;
    }

    @Override
    public void close() throws SQLException {
        processor.close();
    }
}
