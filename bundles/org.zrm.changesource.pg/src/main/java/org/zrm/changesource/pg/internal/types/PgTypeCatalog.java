package org.zrm.changesource.pg.internal.types;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.zrm.protocol.PgTypeClass;

/**
 * A snapshot of {@code pg_type} used to resolve array types and their element types, plus a cache
 * of parsers per OID. Thread-safe.
 */
public final class PgTypeCatalog {

    private static final String QUERY =
            "SELECT oid::int8, typname, typtype::text, typcategory::text, typelem::int8, typdelim::text FROM pg_type";

    private final Map<Integer, PgType> types;
    private final Map<Long, PgValueParser> parsers = new ConcurrentHashMap<>();

    private PgTypeCatalog(Map<Integer, PgType> types) {
        this.types = Map.copyOf(types);
    }

    /** Reads every row of {@code pg_type} (a few hundred rows plus user types). */
    public static PgTypeCatalog load(Connection conn) throws SQLException {
        Map<Integer, PgType> types = new HashMap<>();
        try (PreparedStatement ps = conn.prepareStatement(QUERY); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                PgType t = new PgType((int) rs.getLong(1), rs.getString(2), PgTypeClass.fromWire(rs.getString(3)),
                        rs.getString(4).charAt(0), (int) rs.getLong(5), rs.getString(6).charAt(0));
                types.put(t.oid(), t);
            }
        }
        return new PgTypeCatalog(types);
    }

    /** A catalog of exactly the given types (tests, or callers that resolved types themselves). */
    public static PgTypeCatalog of(Iterable<PgType> types) {
        Map<Integer, PgType> m = new HashMap<>();
        types.forEach(t -> m.put(t.oid(), t));
        return new PgTypeCatalog(m);
    }

    /** The type with this OID, or {@code null} if the snapshot does not contain it. */
    public PgType get(int oid) {
        return types.get(oid);
    }

    /** Whether the snapshot knows the OID (else the caller may {@link #load reload}). */
    public boolean contains(int oid) {
        return types.containsKey(oid);
    }

    /** The (cached) parser for values of type {@code oid}. */
    public PgValueParser parser(int oid, PgValueParsers.Target target) {
        long key = ((long) target.ordinal() << 32) | (oid & 0xffffffffL);
        return parsers.computeIfAbsent(key, k -> PgValueParsers.forType(oid, types::get, target));
    }
}
