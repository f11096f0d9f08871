package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.zrm.protocol.json.ProtocolCodec;

class ChangeTagTest {

    private static final ProtocolCodec CODEC = new ProtocolCodec();

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        // the shape every ZRM and zero-cache row has
        "{\"tag\":\"insert\",\"relation\":{\"tag\":\"x\"}}|insert",
        "{\"tag\":\"backfill-completed\"}|backfill-completed",
        // other writers' shapes: whitespace, tag not first, nested objects with their own tag
        " { \"tag\" : \"update\" } |update",
        "{\"relation\":{\"tag\":\"nested\",\"a\":[1,{\"tag\":\"deeper\"}]},\"tag\":\"delete\"}|delete",
        "{\"new\":{\"s\":\"a \\\" } ] , \\\\\",\"n\":-1.5e3,\"b\":true,\"z\":null},\"tag\":\"truncate\"}|truncate",
        "{\"n\":1 , \"e\":[] ,\"o\":{},\"tag\":\"commit\"}|commit",
        // escapes in the key and in the value
        "{\"\\u0074ag\":\"begin\"}|begin",
        "{\"tag\":\"a\\\"b\"}|a\"b",
    })
    void readsTheTopLevelTag(String json, String tag) {
        assertEquals(tag, ChangeTag.of(json, CODEC));
    }

    @Test
    void commonTagsAreTheSameInstanceEveryTime() {
        assertSame(ChangeTag.of("{\"tag\":\"insert\",\"new\":{}}", CODEC), ChangeTag.of("{\"tag\":\"insert\"}", CODEC));
        assertEquals("insertx", ChangeTag.of("{\"tag\":\"insertx\"}", CODEC));
        assertEquals("inser", ChangeTag.of("{\"tag\":\"inser\"}", CODEC));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{}",
        "{\"relation\":{\"tag\":\"insert\"}}",
        "{\"tag\":1}",
        "[\"tag\",\"insert\"]",
        "{\"tag\"",
        "{\"a\":,\"tag\":\"insert\"}",
        "{\"a\":[1}],\"tag\":\"insert\"}",
        "",
    })
    void rejectsTextWithoutATopLevelStringTag(String json) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ChangeTag.of(json, CODEC));
        assertTrue(e.getMessage().startsWith("cannot read the tag of change"), e.getMessage());
    }
}
