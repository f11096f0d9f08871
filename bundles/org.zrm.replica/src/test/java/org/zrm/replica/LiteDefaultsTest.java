package org.zrm.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Port of upstream {@code db/pg-to-lite.test.ts} ("supported/unsupported column default"). */
class LiteDefaultsTest {

    @Test
    void noDefault() {
        assertNull(LiteDefaults.mapPostgresToLiteDefault("t", "c", null));
        assertNull(LiteDefaults.mapPostgresToLiteDefault("t", "c", ""));
    }

    @Test
    void supportedDefaults() {
        String[][] cases = {
            {"123", "123"}, {"0", "0"}, {"-456", "-456"}, {"2147483648", "2147483648"},
            {"123.456", "123.456"}, {"-0.5", "-0.5"},
            {"true", "1"}, {"false", "0"},
            {"'12345678901234567890'::bigint", "'12345678901234567890'"}, {"'foo'::text", "'foo'"},
            {"'hello world'::varchar", "'hello world'"}, {"''::text", "''"}, {"'it''s'::text", "'it''s'"},
            {"ARRAY[]::text[]", "'[]'"}, {"ARRAY[]::integer[]", "'[]'"}, {"ARRAY[ ]::text[]", "'[]'"},
            {"array[]::text[]", "'[]'"}, {"'{}'::text[]", "'[]'"}, {"'{}'::integer[]", "'[]'"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], LiteDefaults.mapPostgresToLiteDefault("t", "c", c[0]), c[0]);
        }
    }

    @Test
    void unsupportedDefaultsNameTableColumnAndExpression() {
        for (String unsupported : List.of("(id + 2)", "generate(id)", "now()", "current_timestamp", "CURRENT_USER",
                "ARRAY['a', 'b']::text[]", "ARRAY[1,2,3]::integer[]", "1::integer", "true AND false", "NOT true",
                "gen_random_uuid()", "'foo'", "'{t,f}'::boolean[]", "(2147483647 + 2)", "123\n",
                // JavaScript's '.' does not match line terminators: a multi-line literal is backfilled
                "'a\nb'::text", "'a\rb'::text", "'a\u2028b'::text")) {
            UnsupportedColumnDefaultException e = assertThrows(UnsupportedColumnDefaultException.class,
                    () -> LiteDefaults.mapPostgresToLiteDefault("t", "c", unsupported), unsupported);
            assertEquals("Unsupported default value for t.c: " + unsupported, e.getMessage());
        }
    }

    @Test
    void aNextLineCharacterIsNotALineTerminatorInJavaScript() {
        assertEquals("'a\u0085b'", LiteDefaults.mapPostgresToLiteDefault("t", "c", "'a\u0085b'::text"));
    }
}
