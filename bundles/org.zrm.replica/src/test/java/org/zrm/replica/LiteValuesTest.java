package org.zrm.replica;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.protocol.JsonFormat;

/** Upstream {@code liteValue} ({@code types/lite.ts}). */
class LiteValuesTest {

    @Test
    void scalarsBooleansAndNulls() {
        assertEquals(1L, LiteValues.liteValue(true, "bool", JsonFormat.PARSED));
        assertEquals(0L, LiteValues.liteValue(false, "bool|NOT_NULL", JsonFormat.PARSED));
        assertNull(LiteValues.liteValue(null, "int4", JsonFormat.PARSED));
        assertNull(LiteValues.liteValue(null, "jsonb", JsonFormat.STRINGIFIED));
        assertArrayEquals(new byte[] {1}, (byte[]) LiteValues.liteValue(new byte[] {1}, "bytea", JsonFormat.PARSED));
        assertEquals(1.5, LiteValues.liteValue(1.5, "float8", JsonFormat.PARSED));
        assertEquals("x", LiteValues.liteValue("x", "text", JsonFormat.PARSED));
        BigInteger big = BigInteger.TWO.pow(60);
        assertEquals(big, LiteValues.liteValue(big, "int8", JsonFormat.PARSED));
    }

    @Test
    void jsonColumnsHoldJsonText() {
        // stringified format: the string already is JSON text
        assertEquals("{\"a\":1}", LiteValues.liteValue("{\"a\":1}", "json", JsonFormat.STRINGIFIED));
        // parsed format: a JSON string value is stringified
        assertEquals("\"x\"", LiteValues.liteValue("x", "jsonb", JsonFormat.PARSED));
        assertEquals("{\"a\":1}", LiteValues.liteValue(Map.of("a", 1L), "jsonb|NOT_NULL", JsonFormat.PARSED));
        assertEquals("true", LiteValues.liteValue(true, "json", JsonFormat.PARSED), "booleans stay JSON booleans");
    }

    @Test
    void arraysHoldJsonText() {
        // booleans inside arrays stay true/false (array columns are json)
        assertEquals("[true,false,null]",
                LiteValues.liteValue(Arrays.asList(true, false, null), "bool[]", JsonFormat.STRINGIFIED));
        assertEquals("[1,2]", LiteValues.liteValue(List.of(1L, 2L), "int4[]|TEXT_ARRAY", JsonFormat.PARSED));
    }

    @Test
    void objectsInNonJsonColumnsBecomeJsonText() {
        // Buffer JSON streamed into a bytea column becomes its JSON text (QUIRK bytea)
        Map<String, Object> buffer = new LinkedHashMap<>();
        buffer.put("type", "Buffer");
        buffer.put("data", List.of(1L));
        assertEquals("{\"type\":\"Buffer\",\"data\":[1]}", LiteValues.liteValue(buffer, "bytea", JsonFormat.STRINGIFIED));
        // a list in a column not declared as an array: booleans inside become 0/1
        assertEquals("[1,0]", LiteValues.liteValue(List.of(true, false), "point", JsonFormat.PARSED));
    }
}
