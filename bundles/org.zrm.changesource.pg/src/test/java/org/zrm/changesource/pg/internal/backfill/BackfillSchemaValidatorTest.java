package org.zrm.changesource.pg.internal.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.zrm.changesource.pg.internal.setup.PublishedColumn;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.PublishedTable;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.PgTypeClass;
import org.zrm.protocol.json.ProtocolCodec;

/** The request checks without Postgres: malformed metadata, the order of the checks, the result. */
class BackfillSchemaValidatorTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    /** public.t (oid 200 in schema 100): id (1), a (2), b (3); row key id. */
    private static final PublishedSchema SCHEMA = new PublishedSchema(List.of(table()), List.of(), Map.of());

    private static PublishedTable table() {
        Map<String, PublishedColumn> cols = new LinkedHashMap<>();
        cols.put("id", column("id", 1));
        cols.put("a", column("a", 2));
        cols.put("b", column("b", 3));
        return new PublishedTable(200, "public", 100, "t", 'd', cols, List.of("id"), List.of("p"), List.of(),
                List.of("id"));
    }

    private static PublishedColumn column(String name, int pos) {
        return new PublishedColumn(name, pos, "int4", PgTypeClass.BASE, null, 23, null, false, null);
    }

    private static BackfillRequest request(String metadata, String columns) {
        return CODEC.decodeBackfillRequest("{\"table\":{\"schema\":\"public\",\"name\":\"t\",\"metadata\":" + metadata
                + "},\"columns\":" + columns + "}");
    }

    @ParameterizedTest(name = "invalid metadata: {0}")
    @CsvSource(delimiter = '|', value = {
        "null | Table metadata is missing",
        "{\"relationOID\":200,\"rowKey\":{}} | Invalid table metadata schemaOID: expected an integer, got null",
        "{\"schemaOID\":100,\"relationOID\":\"200\",\"rowKey\":{}} "
                + "| Invalid table metadata relationOID: expected an integer, got 200",
        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":1}} "
                + "| Invalid row key column id: expected {\"attNum\":n}, got 1",
        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":1.5}}} "
                + "| Invalid row key column id attNum: expected an integer, got 1.5"})
    void invalidMetadata(String metadata, String reason) {
        SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class,
                () -> BackfillSchemaValidator.validate(request(metadata, "{\"a\":{\"attNum\":2}}"), SCHEMA));
        assertEquals("Cannot backfill public.t[a]: " + reason, e.getMessage());
    }

    @Test
    void invalidColumnId() {
        SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class,
                () -> BackfillSchemaValidator.metadata(request(
                        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":1}}}", "{\"a\":{}}")));
        assertEquals("Cannot backfill public.t[a]: Invalid backfill column a attNum: expected an integer, got null",
                e.getMessage());
    }

    @ParameterizedTest(name = "first failing check wins: {1}")
    @CsvSource(delimiter = '|', value = {
        // wrong schema oid and a missing column: the schema is reported
        "{\"schemaOID\":101,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":1}}} | {\"x\":{\"attNum\":9}} "
                + "| Schema no longer corresponds to the original schema",
        "{\"schemaOID\":100,\"relationOID\":201,\"rowKey\":{\"id\":{\"attNum\":1}}} | {\"x\":{\"attNum\":9}} "
                + "| Table no longer corresponds to the original table",
        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"a\":{\"attNum\":2}}} | {\"x\":{\"attNum\":9}} "
                + "| Row key (e.g. PRIMARY KEY or INDEX) has changed",
        // row-key columns are checked before the backfill columns
        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":5}}} | {\"x\":{\"attNum\":9}} "
                + "| Column id no longer corresponds to the original column",
        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":1}}} | {\"b\":{\"attNum\":2},\"x\":{\"attNum\":9}} "
                + "| Column b no longer corresponds to the original column",
        "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":1}}} | {\"x\":{\"attNum\":9},\"b\":{\"attNum\":2}} "
                + "| Column x has been renamed or dropped"})
    void checkOrder(String metadata, String columns, String reason) {
        SchemaIncompatibilityException e = assertThrows(SchemaIncompatibilityException.class,
                () -> BackfillSchemaValidator.validate(request(metadata, columns), SCHEMA));
        assertEquals(reason, e.getMessage().substring(e.getMessage().indexOf("]: ") + 3));
    }

    @Test
    void validRequestSplitsRowKeyAndColumns() throws Exception {
        BackfillSchemaValidator.Validated v = BackfillSchemaValidator.validate(request(
                "{\"schemaOID\":100,\"relationOID\":200,\"rowKey\":{\"id\":{\"attNum\":1}}}",
                "{\"b\":{\"attNum\":3},\"id\":{\"attNum\":1},\"a\":{\"attNum\":2}}"), SCHEMA);
        assertEquals(List.of("id"), v.rowKey());
        assertEquals(List.of("b", "a"), v.columns());
        assertEquals(List.of("id", "b", "a"), v.copyColumns());
    }
}
