package org.zrm.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LiteNamesTest {

    @Test
    void tableNamesDropOnlyThePublicSchema() {
        assertEquals("issue", LiteNames.tableName("public", "issue"));
        assertEquals("other.issue", LiteNames.tableName("other", "issue"));
        assertEquals("Public.issue", LiteNames.tableName("Public", "issue"));
    }

    @Test
    void identifiersAreDoubleQuoted() {
        assertEquals("\"a\"", LiteNames.quote("a"));
        assertEquals("\"other.col\"", LiteNames.quote("other.col"));
        assertEquals("\"say \"\"hi\"\"\"", LiteNames.quote("say \"hi\""));
    }

    @Test
    void indexStatementsAreUpstreamsText() {
        Map<String, String> cols = new LinkedHashMap<>();
        cols.put("i4", "DESC");
        cols.put("i2", "ASC");
        assertEquals("CREATE UNIQUE INDEX \"types_i4_desc\" ON \"types\" (\"i4\" DESC,\"i2\" ASC);",
                LiteNames.createIndexStatement("types_i4_desc", "types", true, cols));
        assertEquals("CREATE  INDEX \"s.ix\" ON \"s.t\" (\"id\" ASC);",
                LiteNames.createIndexStatement("s.ix", "s.t", false, Map.of("id", "ASC")));
    }
}
