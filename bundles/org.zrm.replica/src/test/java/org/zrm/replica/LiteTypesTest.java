package org.zrm.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.ColumnSpec;
import org.zrm.protocol.Maybe;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.PgTypeClass;

/** Ports of upstream {@code types/lite.test.ts} and the column part of {@code db/pg-to-lite.test.ts}. */
class LiteTypesTest {

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
    void protocolColumnsMapLikePublishedColumns() {
        assertEquals("mood[]|NOT_NULL|TEXT_ENUM|TEXT_ARRAY",
                LiteTypes.forColumn(column("mood[]", PgTypeClass.BASE, Maybe.of(PgTypeClass.ENUM), Maybe.of(true))));
        // absent or null notNull and elemPgTypeClass: nullable, not an array
        assertEquals("text", LiteTypes.forColumn(column("text", PgTypeClass.BASE, Maybe.absent(), Maybe.absent())));
        assertEquals("text", LiteTypes.forColumn(column("text", null, Maybe.ofNull(), Maybe.ofNull())));
        assertEquals("mood|TEXT_ENUM", LiteTypes.forColumn(column("mood", PgTypeClass.ENUM, Maybe.ofNull(),
                Maybe.of(false))));
        assertThrows(IllegalArgumentException.class,
                () -> LiteTypes.forColumn(column("a|b", PgTypeClass.BASE, Maybe.absent(), Maybe.absent())));
    }

    @Test
    void attributesAreReadBack() {
        String t = "mood[]|NOT_NULL|TEXT_ENUM|TEXT_ARRAY";
        assertEquals("mood[]", LiteTypes.upstreamDataType(t));
        assertEquals("int4", LiteTypes.upstreamDataType("int4"));
        assertTrue(LiteTypes.isNotNull(t));
        assertTrue(LiteTypes.isEnum(t));
        assertTrue(LiteTypes.isArray(t));
        assertFalse(LiteTypes.isNotNull("int4"));
        assertFalse(LiteTypes.isEnum("int4|NOT_NULL"));
        assertFalse(LiteTypes.isArray("int4|NOT_NULL"));
        assertTrue(LiteTypes.isArray("int4[]"), "legacy array types without |TEXT_ARRAY");
    }

    @Test
    void zqlTypes() {
        assertEquals(Optional.of(ZqlType.NUMBER), LiteTypes.zqlType("int8|NOT_NULL"));
        assertEquals(Optional.of(ZqlType.NUMBER), LiteTypes.zqlType("timestamp with time zone"));
        assertEquals(Optional.of(ZqlType.NUMBER), LiteTypes.zqlType("NUMERIC(10,2)"));
        assertEquals(Optional.of(ZqlType.STRING), LiteTypes.zqlType("character varying(20)"));
        assertEquals(Optional.of(ZqlType.STRING), LiteTypes.zqlType("mood|TEXT_ENUM"));
        assertEquals(Optional.of(ZqlType.JSON), LiteTypes.zqlType("bytea[]|TEXT_ARRAY"));
        assertEquals(Optional.of(ZqlType.JSON), LiteTypes.zqlType("jsonb|NOT_NULL"));
        assertEquals(Optional.of(ZqlType.BOOLEAN), LiteTypes.zqlType("bool"));
        assertEquals(Optional.empty(), LiteTypes.zqlType("bytea"));
        assertEquals(Optional.empty(), LiteTypes.zqlType("interval"));
    }

    private static ColumnSpec column(String dataType, PgTypeClass typeClass, Maybe<PgTypeClass> elem,
            Maybe<Boolean> notNull) {
        return new ColumnSpec(1, dataType, typeClass, elem, Maybe.absent(), notNull, Maybe.absent(), Passthrough.NONE);
    }
}
