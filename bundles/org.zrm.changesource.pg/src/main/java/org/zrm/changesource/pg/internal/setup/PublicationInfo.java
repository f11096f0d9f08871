package org.zrm.changesource.pg.internal.setup;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * The published schema plus the publications' operation flags (upstream {@code getPublicationInfo}).
 * All three queries run on the caller's connection, so inside a snapshot transaction they see the
 * snapshot.
 */
public record PublicationInfo(PublishedSchema schema, List<Publication> publications) {

    /** A row of {@code pg_publication}. */
    public record Publication(String pubname, boolean pubinsert, boolean pubupdate, boolean pubdelete,
            boolean pubtruncate) {}

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    /**
     * @throws SQLException on database errors
     * @throws UnsupportedTableSchemaException if a table is published with different column sets
     */
    @SuppressWarnings("unchecked")
    public static PublicationInfo read(Connection conn, List<String> publications) throws SQLException {
        String pubList = ShardSql.literalList(publications);
        try (Statement st = conn.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT schemaname AS \"schema\", tablename AS \"table\", "
                    + "json_object_agg(pubname, attnames)::text AS \"publications\" FROM pg_publication_tables pb "
                    + "WHERE pb.pubname IN (" + pubList + ") GROUP BY schemaname, tablename")) {
                while (rs.next()) {
                    Map<String, Object> byPub = (Map<String, Object>) CODEC.decodeValue(rs.getString(3));
                    Set<Object> expected = null;
                    for (Object cols : byPub.values()) {
                        Set<Object> s = new HashSet<>((List<Object>) cols);
                        if (expected == null) {
                            expected = s;
                        } else if (!expected.equals(s)) {
                            throw new UnsupportedTableSchemaException("Table " + rs.getString(2)
                                    + " is exported with different columns: " + expected + " vs " + s);
                        }
                    }
                }
            }
            List<Publication> pubs = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT pubname,pubinsert,pubupdate,pubdelete,pubtruncate FROM "
                    + "pg_publication pb WHERE pb.pubname IN (" + pubList + ") ORDER BY pubname")) {
                while (rs.next()) {
                    pubs.add(new Publication(rs.getString(1), rs.getBoolean(2), rs.getBoolean(3), rs.getBoolean(4),
                            rs.getBoolean(5)));
                }
            }
            try (ResultSet rs = st.executeQuery(ShardSql.publishedSchemaQuery(publications))) {
                if (!rs.next() || rs.getString(1) == null) {
                    throw new SQLException("Invalid publishedSchema result");
                }
                // JSON.parse semantics: a table in several of the publications repeats its index
                // columns in the json_object_agg, which upstream reads as one member each.
                Map<String, Object> raw = (Map<String, Object>) CODEC.decodeValueLikeJsonParse(rs.getString(1));
                return new PublicationInfo(PublishedSchema.parse(raw), List.copyOf(pubs));
            }
        }
    }
}
