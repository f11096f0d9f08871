package org.zrm.changesource.pg.internal.sync;

import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.changesource.pg.internal.setup.ShardSql;
import org.zrm.changesource.pg.internal.types.BinaryCopyDecoders;
import org.zrm.changesource.pg.internal.types.BinaryValueDecoder;
import org.zrm.changesource.pg.internal.types.PgType;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.changesource.pg.internal.types.PgValueParser;
import org.zrm.changesource.pg.internal.types.PgValueParsers;
import org.zrm.protocol.JsonFormat;
import org.zrm.replica.LiteValues;

/**
 * How a published table is read with COPY: the select expression and decoder of each column in
 * binary mode, and the row filter. Initial sync and backfill share it, so that a backfilled value
 * is exactly what initial sync would have copied.
 */
public final class CopySelect {

    private CopySelect() {}

    /**
     * One column of a binary COPY.
     *
     * @param selectExpression the quoted column, or {@code "col"::text} for types without a binary
     *     decoder
     * @param decoder produces the SQLite replica value of a non-NULL field
     */
    public record BinaryColumn(String selectExpression, BinaryValueDecoder decoder) {}

    /** The select expression and decoder of {@code c} in a binary COPY (replica values). */
    public static BinaryColumn binaryColumn(PublishedColumn c, PgTypeCatalog catalog) {
        PgType type = catalog.get(c.typeOid());
        boolean isArray = type != null && type.isArray();
        int elemOid = isArray ? type.elemOid() : 0;
        String quoted = ShardSql.quoteId(c.name());
        if (BinaryCopyDecoders.hasBinaryDecoder(c.typeOid(), c.pgTypeClass(), elemOid,
                isArray ? c.elemPgTypeClass() : null)) {
            return new BinaryColumn(quoted, BinaryCopyDecoders.forColumn(c.typeOid(), c.pgTypeClass(), elemOid,
                    isArray ? c.elemPgTypeClass() : null));
        }
        if (isArray) {
            // Element type without a binary decoder: take the text form and parse it, rather than
            // upstream's UTF-8 reading of binary element bytes (see BinaryCopyDecoders).
            return new BinaryColumn(quoted + "::text",
                    replicaTextDecoder(catalog.parser(c.typeOid(), PgValueParsers.Target.REPLICA), c.dataType()));
        }
        return new BinaryColumn(quoted + "::text", BinaryCopyDecoders.TEXT_CAST);
    }

    /** Parses a text field with {@code parser} and converts it to the replica value of {@code dataType}. */
    static BinaryValueDecoder replicaTextDecoder(PgValueParser parser, String dataType) {
        return (b, o, l) -> LiteValues.liteValue(parser.parse(new String(b, o, l, StandardCharsets.UTF_8)), dataType,
                JsonFormat.STRINGIFIED);
    }

    /**
     * The {@code WHERE} clause of the table's COPY, with a leading space, or the empty string.
     *
     * <p>DECISION (QUIRK "row filter OR-ing drops unfiltered publications"): fixed. If any
     * publication publishes the table without a row filter, every row is copied, which is what the
     * replication stream publishes; upstream applied the other publications' filters anyway.
     */
    public static String where(PublishedTable table) {
        boolean someUnfiltered = table.rowFilters().size() < table.publications().size();
        if (table.rowFilters().isEmpty() || someUnfiltered) {
            return "";
        }
        return " WHERE " + table.rowFilters().stream().collect(Collectors.joining(" OR "));
    }
}
