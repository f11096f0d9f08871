package org.zrm.changesource.pg.internal.types;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.JsonFormat;
import org.zrm.protocol.PgTypeClass;

/** Ports of upstream {@code types/lite.test.ts} and {@code db/pg-to-lite.test.ts}. */
class LiteConversionTest {

    @Test
    void liteTypeStrings() {
        assertEquals("int4|NOT_NULL", LiteTypes.forColumn("int4", true, PgTypeClass.BASE, null));
        assertEquals("int4[]|TEXT_ARRAY", LiteTypes.forColumn("int4[]", false, PgTypeClass.BASE, PgTypeClass.BASE));
        assertEquals("enumz|TEXT_ENUM", LiteTypes.forColumn("enumz", false, PgTypeClass.ENUM, null));
        assertEquals("mood[]|NOT_NULL|TEXT_ENUM|TEXT_ARRAY",
                LiteTypes.forColumn("mood[]", true, PgTypeClass.BASE, PgTypeClass.ENUM));
        assertThrows(IllegalArgumentException.class, () -> LiteTypes.liteTypeString("a|b", false, false, false));
    }

    @Test
    void zqlTypes() {
        assertEquals(Optional.of(ZqlType.NUMBER), LiteTypes.zqlType("int8|NOT_NULL"));
        assertEquals(Optional.of(ZqlType.NUMBER), LiteTypes.zqlType("timestamp with time zone"));
        assertEquals(Optional.of(ZqlType.STRING), LiteTypes.zqlType("character varying(20)"));
        assertEquals(Optional.of(ZqlType.STRING), LiteTypes.zqlType("mood|TEXT_ENUM"));
        assertEquals(Optional.of(ZqlType.JSON), LiteTypes.zqlType("bytea[]|TEXT_ARRAY"));
        assertEquals(Optional.of(ZqlType.BOOLEAN), LiteTypes.zqlType("bool"));
        assertEquals(Optional.empty(), LiteTypes.zqlType("bytea"));
        assertEquals(Optional.empty(), LiteTypes.zqlType("interval"));
    }

    @Test
    void liteValues() {
        assertEquals(1L, LiteValues.liteValue(true, "bool", JsonFormat.PARSED));
        assertEquals(0L, LiteValues.liteValue(false, "bool", JsonFormat.PARSED));
        assertNull(LiteValues.liteValue(null, "int4", JsonFormat.PARSED));
        assertArrayEquals(new byte[] {1}, (byte[]) LiteValues.liteValue(new byte[] {1}, "bytea", JsonFormat.PARSED));
        assertEquals("{\"a\":1}", LiteValues.liteValue("{\"a\":1}", "json", JsonFormat.STRINGIFIED));
        // parsed format: a JSON string value is stringified
        assertEquals("\"x\"", LiteValues.liteValue("x", "jsonb", JsonFormat.PARSED));
        // booleans inside arrays stay true/false (json column)
        assertEquals("[true,false,null]",
                LiteValues.liteValue(java.util.Arrays.asList(true, false, null), "bool[]", JsonFormat.STRINGIFIED));
        assertEquals("[1,2]", LiteValues.liteValue(List.of(1L, 2L), "int4[]|TEXT_ARRAY", JsonFormat.PARSED));
        assertEquals(1.5, LiteValues.liteValue(1.5, "float8", JsonFormat.PARSED));
        // Buffer JSON streamed into a bytea column becomes its JSON text (QUIRK bytea)
        assertEquals("{\"type\":\"Buffer\",\"data\":[1]}",
                LiteValues.liteValue(PgTextValues.bufferJson(new byte[] {1}), "bytea", JsonFormat.STRINGIFIED));
    }

    @Test
    void mapPostgresToLiteDefault() {
        assertNull(LiteDefaults.mapPostgresToLiteDefault("t", "c", null));
        assertNull(LiteDefaults.mapPostgresToLiteDefault("t", "c", ""));
        assertEquals("123", LiteDefaults.mapPostgresToLiteDefault("t", "c", "123"));
        assertEquals("-1.5", LiteDefaults.mapPostgresToLiteDefault("t", "c", "-1.5"));
        assertEquals("1", LiteDefaults.mapPostgresToLiteDefault("t", "c", "true"));
        assertEquals("0", LiteDefaults.mapPostgresToLiteDefault("t", "c", "false"));
        assertEquals("'2147483648'", LiteDefaults.mapPostgresToLiteDefault("t", "c", "'2147483648'::bigint"));
        assertEquals("'foo'", LiteDefaults.mapPostgresToLiteDefault("t", "c", "'foo'::text"));
        assertEquals("'[]'", LiteDefaults.mapPostgresToLiteDefault("t", "c", "ARRAY[]::text[]"));
        assertEquals("'[]'", LiteDefaults.mapPostgresToLiteDefault("t", "c", "'{}'::integer[]"));
        for (String unsupported : List.of("(2147483647 + 2)", "'{t,f}'::boolean[]", "CURRENT_USER", "now()",
                "'a\nb'::text")) {
            LiteDefaults.UnsupportedColumnDefaultException e = assertThrows(
                    LiteDefaults.UnsupportedColumnDefaultException.class,
                    () -> LiteDefaults.mapPostgresToLiteDefault("t", "c", unsupported));
            assertEquals("Unsupported default value for t.c: " + unsupported, e.getMessage());
        }
    }
}
