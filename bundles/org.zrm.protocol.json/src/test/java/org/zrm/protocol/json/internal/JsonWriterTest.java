package org.zrm.protocol.json.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** String escaping and value writing as json-custom-numbers / JSON.stringify do it. */
class JsonWriterTest {

    private static String str(String s) {
        StringBuilder sb = new StringBuilder();
        JsonWriter.appendString(sb, s);
        return sb.toString();
    }

    @Test
    void escapesOnlyQuoteBackslashAndControls() {
        assertEquals("\"a\\\"b\\\\c\"", str("a\"b\\c"));
        assertEquals("\"\\b\\f\\n\\r\\t\"", str("\b\f\n\r\t"));
        assertEquals("\"\\u0000\\u0001\\u001f\\u000b\"", str("\u0000\u0001\u001f\u000b"));
        assertEquals("\"\u007f\u2028\u2029é漢😀/\"", str("\u007f\u2028\u2029é漢😀/"));
    }

    @Test
    void loneSurrogatesEscapedOnlyAlongsideEscapableCharacters() {
        // with an escapable character the native JSON.stringify path escapes lone surrogates
        assertEquals("\"\\ud800\\n\\udfff\"", str("\ud800\n\udfff"));
        // a valid pair stays raw even on that path
        assertEquals("\"😀\\n\"", str("😀\n"));
        // without one, json-custom-numbers emits the string untouched (upstream quirk)
        assertEquals("\"\ud800\"", str("\ud800"));
    }

    @Test
    void writesNestedValuesWithoutWhitespace() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("b", 1L);
        m.put("a", null);
        m.put("big", new BigInteger("18446744073709551615"));
        m.put("neg", -9223372036854775808L);
        m.put("d", 0.5);
        m.put("nan", Double.NaN);
        m.put("list", Arrays.asList(true, false, null, List.of(), Map.of()));
        m.put("i", 7);
        assertEquals("{\"b\":1,\"a\":null,\"big\":18446744073709551615,\"neg\":-9223372036854775808,"
                + "\"d\":0.5,\"nan\":null,\"list\":[true,false,null,[],{}],\"i\":7}",
                new JsonWriter().value(m).toString());
    }

    @Test
    void ordersObjectKeysLikeJavaScript() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String k : List.of("id", "2", "10", "1", "01", "-1", "4294967294", "4294967295", "1.5", "0")) {
            m.put(k, k.equals("0") ? null : k);
        }
        // JSON.stringify of the same object built in Node.js
        assertEquals("{\"0\":null,\"1\":\"1\",\"2\":\"2\",\"10\":\"10\",\"4294967294\":\"4294967294\",\"id\":\"id\","
                + "\"01\":\"01\",\"-1\":\"-1\",\"4294967295\":\"4294967295\",\"1.5\":\"1.5\"}",
                new JsonWriter().value(m).toString());
        for (String k : List.of("0", "7", "10", "4294967294")) {
            assertTrue(JsObjectKeys.isArrayIndex(k), k);
        }
        for (String k : List.of("", "00", "01", "-0", "-1", "+1", "1.0", "1e3", " 1", "4294967295", "99999999999", "\u0661")) {
            assertFalse(JsObjectKeys.isArrayIndex(k), k);
        }
    }

    @Test
    void rejectsNonJsonValues() {
        assertThrows(IllegalArgumentException.class, () -> new JsonWriter().value(new Object()));
        assertThrows(IllegalArgumentException.class, () -> new JsonWriter().value(Map.of(1, 2)));
    }
}
