package org.zrm.changesource.pg.internal.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.zrm.changesource.pg.internal.stream.PublishedJson.*;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.pg.internal.setup.PublishedSchema;
import org.zrm.changesource.pg.internal.setup.TableValidator;
import org.zrm.changesource.pg.internal.setup.UnsupportedTableSchemaException;
import org.zrm.protocol.SchemaChange;

/**
 * The schema diff on schemas built from published JSON: every change kind with its exact JSON,
 * the emission order, structural index changes and the backfill rules per command tag.
 */
class SchemaDiffTest {

    private final SchemaDiff diff = new SchemaDiff(TableValidator.strict(), CODEC);

    private static final String FOO = table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true),
            text("name", 2, false));
    private static final String FOO_PKEY = index("public", "foo", "foo_pkey", true, true, false, "\"id\":\"ASC\"");

    private List<String> run(PublishedSchema prev, PublishedSchema next, String tag) {
        return diff.diff(prev, next, tag).stream().map(CODEC::encodeChange).toList();
    }

    private List<String> tags(PublishedSchema prev, PublishedSchema next, String tag) {
        return diff.diff(prev, next, tag).stream().map(SchemaChange::tag).toList();
    }

    private static PublishedSchema empty() {
        return schema(List.of(), List.of());
    }

    private static PublishedSchema foo(String... extraCols) {
        return schema(List.of(fooWith(extraCols)), List.of(FOO_PKEY));
    }

    private static String fooWith(String... extraCols) {
        String[] cols = new String[2 + extraCols.length];
        cols[0] = text("id", 1, true);
        cols[1] = text("name", 2, false);
        System.arraycopy(extraCols, 0, cols, 2, extraCols.length);
        return table(100, "public", "foo", 'd', "[\"id\"]", cols);
    }

    private static final String FOO_SPEC = "{\"oid\":100,\"schema\":\"public\",\"schemaOID\":2200,\"name\":\"foo\","
            + "\"replicaIdentity\":\"d\",\"columns\":{\"id\":{\"pos\":1,\"dataType\":\"text\",\"pgTypeClass\":\"b\","
            + "\"elemPgTypeClass\":null,\"typeOID\":25,\"characterMaximumLength\":null,\"notNull\":true,\"dflt\":null},"
            + "\"name\":{\"pos\":2,\"dataType\":\"text\",\"pgTypeClass\":\"b\",\"elemPgTypeClass\":null,\"typeOID\":25,"
            + "\"characterMaximumLength\":null,\"notNull\":false,\"dflt\":null}},\"primaryKey\":[\"id\"],"
            + "\"publications\":{\"zero_all\":{\"rowFilter\":null}},\"replicaIdentityColumns\":[\"id\"]}";
    private static final String FOO_META = "{\"schemaOID\":2200,\"relationOID\":100,\"rowKey\":{\"id\":{\"attNum\":1}}}";

    @Test
    void createTableByCreateNeedsNoBackfill() {
        assertEquals(List.of("{\"tag\":\"create-table\",\"spec\":" + FOO_SPEC + ",\"metadata\":" + FOO_META + "}",
                "{\"tag\":\"create-index\",\"spec\":{\"schema\":\"public\",\"tableName\":\"foo\",\"name\":\"foo_pkey\","
                        + "\"unique\":true,\"isPrimaryKey\":true,\"isReplicaIdentity\":false,\"isImmediate\":true,"
                        + "\"columns\":{\"id\":\"ASC\"}}}"),
                run(empty(), foo(), "CREATE TABLE"));
    }

    @Test
    void createTableByAnyOtherCommandIsBackfilled() {
        for (String tag : List.of("ALTER PUBLICATION", "ALTER TABLE", "COMMENT", "MANUAL", "UNKNOWN")) {
            assertEquals("{\"tag\":\"create-table\",\"spec\":" + FOO_SPEC + ",\"metadata\":" + FOO_META
                    + ",\"backfill\":{\"id\":{\"attNum\":1},\"name\":{\"attNum\":2}}}", run(empty(), foo(), tag).get(0), tag);
        }
    }

    @Test
    void dropTableAfterItsIndexes() {
        assertEquals(List.of("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"foo_pkey\"}}",
                "{\"tag\":\"drop-table\",\"id\":{\"schema\":\"public\",\"name\":\"foo\"}}"), run(foo(), empty(), "DROP TABLE"));
    }

    @Test
    void renameTableKeepsItsIndexes() {
        PublishedSchema renamed = schema(List.of(table(100, "public", "bar", 'd', "[\"id\"]", text("id", 1, true),
                text("name", 2, false))), List.of(index("public", "bar", "foo_pkey", true, true, false, "\"id\":\"ASC\"")));
        assertEquals(List.of("{\"tag\":\"rename-table\",\"old\":{\"schema\":\"public\",\"name\":\"foo\"},"
                + "\"new\":{\"schema\":\"public\",\"name\":\"bar\"}}"), run(foo(), renamed, "ALTER TABLE"));
    }

    @Test
    void renameSchemaRecreatesIndexesUnderTheirNewIds() {
        PublishedSchema moved = schema(List.of(table(100, "other", "foo", 'd', "[\"id\"]", text("id", 1, true),
                text("name", 2, false))), List.of(index("other", "foo", "foo_pkey", true, true, false, "\"id\":\"ASC\"")));
        assertEquals(List.of("drop-index", "rename-table", "create-index"), tags(foo(), moved, "ALTER SCHEMA"));
    }

    @Test
    void renameColumnIsAnUpdateAndNotAnIndexChange() {
        PublishedSchema prev = schema(List.of(fooWith()), List.of(FOO_PKEY,
                index("public", "foo", "foo_name_key", true, false, false, "\"name\":\"ASC\"")));
        PublishedSchema next = schema(List.of(table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true),
                text("handle", 2, false))), List.of(FOO_PKEY,
                index("public", "foo", "foo_name_key", true, false, false, "\"handle\":\"ASC\"")));
        assertEquals(List.of("{\"tag\":\"update-column\",\"table\":{\"schema\":\"public\",\"name\":\"foo\"},"
                + "\"old\":{\"name\":\"name\",\"spec\":{\"pos\":2,\"dataType\":\"text\",\"pgTypeClass\":\"b\","
                + "\"elemPgTypeClass\":null,\"typeOID\":25,\"characterMaximumLength\":null,\"notNull\":false,\"dflt\":null}},"
                + "\"new\":{\"name\":\"handle\",\"spec\":{\"pos\":2,\"dataType\":\"text\",\"pgTypeClass\":\"b\","
                + "\"elemPgTypeClass\":null,\"typeOID\":25,\"characterMaximumLength\":null,\"notNull\":false,"
                + "\"dflt\":null}}}"), run(prev, next, "ALTER TABLE"));
    }

    @Test
    void typeAndNullabilityChangesAreUpdatesButADefaultAloneIsNothing() {
        PublishedSchema retyped = schema(List.of(table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true),
                col("name", 2, "varchar", 1043, false, "null"))), List.of(FOO_PKEY));
        assertEquals(List.of("update-column"), tags(foo(), retyped, "ALTER TABLE"));
        PublishedSchema notNull = schema(List.of(table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true),
                text("name", 2, true))), List.of(FOO_PKEY));
        assertEquals(List.of("update-column"), tags(foo(), notNull, "ALTER TABLE"));
        PublishedSchema withDefault = schema(List.of(table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true),
                col("name", 2, "text", 25, false, "\"'x'::text\""))), List.of(FOO_PKEY));
        assertEquals(List.of(), tags(foo(), withDefault, "ALTER TABLE"));
    }

    private static final String ADD_PREFIX = "{\"tag\":\"add-column\",\"table\":{\"schema\":\"public\",\"name\":\"foo\"},"
            + "\"column\":{\"name\":\"c\",\"spec\":{\"pos\":3,\"dataType\":\"text\",\"pgTypeClass\":\"b\","
            + "\"elemPgTypeClass\":null,\"typeOID\":25,\"characterMaximumLength\":null,\"notNull\":false,\"dflt\":";

    @Test
    void addColumnWithConstantDefaultByAlterTableKeepsTheDefault() {
        assertEquals(List.of(ADD_PREFIX + "\"'x'::text\"}},\"tableMetadata\":" + FOO_META + "}"),
                run(foo(), foo(col("c", 3, "text", 25, false, "\"'x'::text\"")), "ALTER TABLE"));
        assertEquals(List.of(ADD_PREFIX + "null}},\"tableMetadata\":" + FOO_META + "}"),
                run(foo(), foo(text("c", 3, false)), "ALTER TABLE"));
    }

    @Test
    void addColumnWithUnsupportedDefaultIsBackfilledWithNullDefault() {
        assertEquals(List.of(ADD_PREFIX + "null}},\"tableMetadata\":" + FOO_META + ",\"backfill\":{\"attNum\":3}}"),
                run(foo(), foo(col("c", 3, "text", 25, false, "\"(random())::text\"")), "ALTER TABLE"));
    }

    @Test
    void addColumnByAnyOtherCommandIsBackfilled() {
        for (String tag : List.of("ALTER PUBLICATION", "COMMENT", "MANUAL", "UNKNOWN", "CREATE TABLE")) {
            assertEquals(List.of(ADD_PREFIX + "null}},\"tableMetadata\":" + FOO_META + ",\"backfill\":{\"attNum\":3}}"),
                    run(foo(), foo(col("c", 3, "text", 25, false, "\"'x'::text\"")), tag), tag);
        }
    }

    @Test
    void dropColumnWithIndexDropsTheIndexFirst() {
        PublishedSchema prev = schema(List.of(fooWith(text("c", 3, false))), List.of(FOO_PKEY,
                index("public", "foo", "foo_c_idx", false, false, false, "\"c\":\"DESC\"")));
        assertEquals(List.of("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"foo_c_idx\"}}",
                "{\"tag\":\"drop-column\",\"table\":{\"schema\":\"public\",\"name\":\"foo\"},\"column\":\"c\"}"),
                run(prev, foo(), "ALTER TABLE"));
    }

    @Test
    void primaryKeySwapUnderTheSameNameIsAStructuralIndexChange() {
        PublishedSchema prev = schema(List.of(table(100, "public", "t", 'd', "[\"a\",\"b\"]", text("a", 1, true),
                text("b", 2, true))), List.of(index("public", "t", "t_pkey", true, true, false,
                "\"a\":\"ASC\",\"b\":\"ASC\"")));
        PublishedSchema next = schema(List.of(table(100, "public", "t", 'd', "[\"a\",\"c\"]", text("a", 1, true),
                col("c", 3, "text", 25, true, "\"'x'::text\""))), List.of(index("public", "t", "t_pkey", true, true, false,
                "\"a\":\"ASC\",\"c\":\"ASC\"")));
        List<SchemaChange> changes = diff.diff(prev, next, "ALTER TABLE");
        assertEquals(List.of("drop-index", "update-table-metadata", "drop-column", "add-column", "create-index"),
                changes.stream().map(SchemaChange::tag).toList());
        assertEquals("{\"tag\":\"update-table-metadata\",\"table\":{\"schema\":\"public\",\"name\":\"t\"},"
                + "\"old\":{\"schemaOID\":2200,\"relationOID\":100,\"rowKey\":{\"a\":{\"attNum\":1},\"b\":{\"attNum\":2}}},"
                + "\"new\":{\"schemaOID\":2200,\"relationOID\":100,\"rowKey\":{\"a\":{\"attNum\":1},\"c\":{\"attNum\":3}}}}",
                CODEC.encodeChange(changes.get(1)));
    }

    @Test
    void indexFlagChangeIsStructuralButReorderingTheSameColumnsIsNot() {
        String idx = "\"id\":\"ASC\",\"name\":\"ASC\"";
        PublishedSchema prev = schema(List.of(fooWith()), List.of(FOO_PKEY,
                index("public", "foo", "foo_idx", false, false, false, idx)));
        PublishedSchema unique = schema(List.of(fooWith()), List.of(FOO_PKEY,
                index("public", "foo", "foo_idx", true, false, false, idx)));
        assertEquals(List.of("drop-index", "create-index"), tags(prev, unique, "ALTER TABLE"));
        PublishedSchema desc = schema(List.of(fooWith()), List.of(FOO_PKEY,
                index("public", "foo", "foo_idx", false, false, false, "\"id\":\"ASC\",\"name\":\"DESC\"")));
        assertEquals(List.of("drop-index", "create-index"), tags(prev, desc, "ALTER TABLE"));
        PublishedSchema reordered = schema(List.of(fooWith()), List.of(FOO_PKEY,
                index("public", "foo", "foo_idx", false, false, false, "\"name\":\"ASC\",\"id\":\"ASC\"")));
        assertEquals(List.of(), tags(prev, reordered, "ALTER TABLE"));
    }

    @Test
    void replicaIdentityFullUsesTheShortestEligibleKey() {
        String cols = "\"a\":\"ASC\",\"b\":\"ASC\"";
        PublishedSchema prev = schema(List.of(table(100, "public", "e", 'd', "[\"a\",\"b\"]", text("a", 1, true),
                text("b", 2, true))), List.of(index("public", "e", "e_pkey", true, true, false, cols),
                index("public", "e", "e_a_key", true, false, false, "\"a\":\"ASC\"")));
        PublishedSchema next = schema(List.of(table(100, "public", "e", 'f', "[\"a\",\"b\"]", text("a", 1, true),
                text("b", 2, true))), List.of(index("public", "e", "e_pkey", true, true, false, cols),
                index("public", "e", "e_a_key", true, false, false, "\"a\":\"ASC\"")));
        assertEquals(List.of("{\"tag\":\"update-table-metadata\",\"table\":{\"schema\":\"public\",\"name\":\"e\"},"
                + "\"old\":{\"schemaOID\":2200,\"relationOID\":100,\"rowKey\":{\"a\":{\"attNum\":1},\"b\":{\"attNum\":2}}},"
                + "\"new\":{\"schemaOID\":2200,\"relationOID\":100,\"rowKey\":{\"a\":{\"attNum\":1}}}}"),
                run(prev, next, "ALTER TABLE"));
    }

    @Test
    void everyKindInUpstreamsOrder() {
        PublishedSchema prev = schema(List.of(
                table(100, "public", "foo", 'd', "[\"id\"]", text("id", 1, true), text("a", 2, false),
                        text("b", 3, false)),
                table(200, "public", "gone", 'd', "[\"id\"]", text("id", 1, true))),
                List.of(index("public", "gone", "gone_pkey", true, true, false, "\"id\":\"ASC\""),
                        index("public", "foo", "foo_pkey", true, true, false, "\"id\":\"ASC\"")));
        PublishedSchema next = schema(List.of(
                table(100, "public", "renamed", 'd', "[\"a2\"]", text("id", 1, true), text("a2", 2, true),
                        text("c", 4, false)),
                table(300, "public", "fresh", 'd', "[\"id\"]", text("id", 1, true))),
                List.of(index("public", "renamed", "foo_pkey", true, true, false, "\"a2\":\"ASC\""),
                        index("public", "fresh", "fresh_pkey", true, true, false, "\"id\":\"ASC\"")));
        assertEquals(List.of("drop-index", "drop-index", "drop-table", "rename-table", "update-table-metadata",
                "drop-column", "update-column", "add-column", "create-table", "create-index", "create-index"),
                tags(prev, next, "ALTER TABLE"));
        List<SchemaChange> c = diff.diff(prev, next, "ALTER TABLE");
        // prev-only index first, then the structurally changed one; new-only index first on create
        assertEquals("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"gone_pkey\"}}", CODEC.encodeChange(c.get(0)));
        assertEquals("{\"tag\":\"drop-index\",\"id\":{\"schema\":\"public\",\"name\":\"foo_pkey\"}}", CODEC.encodeChange(c.get(1)));
        assertEquals("fresh_pkey", ((org.zrm.protocol.CreateIndex) c.get(9)).spec().name());
        assertEquals("foo_pkey", ((org.zrm.protocol.CreateIndex) c.get(10)).spec().name());
    }

    @Test
    void unchangedSchemaGivesNothing() {
        assertEquals(List.of(), tags(foo(), foo(), "ALTER TABLE"));
    }

    @Test
    void everyTableOfTheNewSchemaIsValidated() {
        PublishedSchema nothing = schema(List.of(table(100, "public", "foo", 'n', "[\"id\"]", text("id", 1, true),
                text("name", 2, false))), List.of(FOO_PKEY));
        UnsupportedTableSchemaException e = assertThrows(UnsupportedTableSchemaException.class,
                () -> diff.diff(foo(), nothing, "ALTER TABLE"));
        assertEquals("Table \"foo\" with REPLICA IDENTITY NOTHING cannot be replicated", e.getMessage());
        PublishedSchema reserved = foo(text("_0_version", 3, false));
        assertEquals("Table \"foo\" uses reserved column name \"_0_version\"",
                assertThrows(UnsupportedTableSchemaException.class, () -> diff.diff(foo(), reserved, "ALTER TABLE"))
                        .getMessage());
    }

    @Test
    void aTableWithoutKeyIsRejectedWhenStrictAndWarnedAboutOtherwise() {
        PublishedSchema noKey = schema(List.of(table(100, "public", "foo", 'd', "[]", text("id", 1, true),
                text("name", 2, false))), List.of());
        assertThrows(UnsupportedTableSchemaException.class, () -> diff.diff(foo(), noKey, "ALTER TABLE"));
        SchemaDiff lenient = new SchemaDiff(new TableValidator(false), CODEC);
        assertEquals(List.of("drop-index", "update-table-metadata"),
                lenient.diff(foo(), noKey, "ALTER TABLE").stream().map(SchemaChange::tag).toList());
    }
}
