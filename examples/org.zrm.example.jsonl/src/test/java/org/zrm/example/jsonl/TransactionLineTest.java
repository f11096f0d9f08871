package org.zrm.example.jsonl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class TransactionLineTest {

    static final String SCHEMA = "{\"id\":\"test-dir\",\"tables\":[{\"schema\":\"public\",\"name\":\"items\","
            + "\"columns\":{\"id\":\"int8\",\"title\":\"text\",\"tags\":\"json\"},\"primaryKey\":[\"id\"]}]}";

    private final DirectorySchema schema = DirectorySchema.parse("schema.json", SCHEMA, "zero", 0);

    @Test
    void theSchemaAddsTheTablesZeroRequires() {
        assertEquals(List.of("zero_0.clients", "zero_0.mutations", "zero.permissions", "public.items"),
                List.copyOf(schema.tableNames()));
        assertEquals("test-dir", schema.id());
    }

    @Test
    void aLineIsParsedWithEveryColumnOfAWholeRow() {
        TransactionLine tx = TransactionLine.parse("{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\","
                + "\"row\":{\"id\":12345678901234567890,\"tags\":[\"a\"]}},{\"op\":\"delete\",\"table\":\"public.items\","
                + "\"key\":{\"id\":2}}]}", "changes-000001.jsonl:1", schema);
        assertEquals(2, tx.changes().size());
        assertEquals(TransactionLine.Op.INSERT, tx.changes().get(0).op());
        assertEquals("{\"id\":12345678901234567890,\"title\":null,\"tags\":[\"a\"]}", tx.changes().get(0).values().toString());
        assertEquals("{\"id\":2}", tx.changes().get(1).values().toString());
        assertEquals(List.of(), TransactionLine.parse("{\"changes\":[]}", "x:1", schema).changes());
    }

    @Test
    void badLinesAreRejectedNamingTheFileLineAndProblem() {
        assertBad("", "a line must be a JSON object");
        assertBad("{\"changes\":[", "not JSON");
        assertBad("[1]", "a line must be a JSON object");
        assertBad("{\"change\":[]}", "unknown field \"change\"");
        assertBad("{\"changes\":{}}", "\"changes\" must be an array");
        assertBad("{\"changes\":[{\"op\":\"upsert\",\"table\":\"public.items\",\"row\":{\"id\":1}}]}",
                "changes[0]: unknown op \"upsert\"");
        assertBad("{\"changes\":[{\"op\":\"insert\",\"table\":\"public.nope\",\"row\":{\"id\":1}}]}",
                "changes[0]: unknown table \"public.nope\"");
        assertBad("{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"id\":1,\"titel\":\"x\"}}]}",
                "public.items has no column \"titel\"");
        assertBad("{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"title\":\"x\"}}]}",
                "primary key column \"id\" of public.items is missing or null");
        assertBad("{\"changes\":[{\"op\":\"delete\",\"table\":\"public.items\",\"key\":{\"id\":1,\"title\":\"x\"}}]}",
                "has no key column \"title\"");
        assertBad("{\"changes\":[{\"op\":\"delete\",\"table\":\"public.items\",\"row\":{\"id\":1}}]}",
                "unknown field \"row\"");
        assertBad("{\"changes\":[{\"op\":\"insert\",\"table\":\"public.items\",\"row\":{\"id\":1}}, 5]}",
                "changes[1]: must be an object");
    }

    @Test
    void badSchemasAreRejected() {
        assertThrows(BadInputException.class, () -> DirectorySchema.parse("s", "{\"tables\":[]}", "zero", 0));
        BadInputException e = assertThrows(BadInputException.class, () -> DirectorySchema.parse("s",
                "{\"id\":\"x\",\"tables\":[{\"schema\":\"zero\",\"name\":\"permissions\",\"columns\":{\"a\":\"int8\"},"
                        + "\"primaryKey\":[\"a\"]}]}", "zero", 0));
        assertTrue(e.getMessage().contains("defined twice"), e.getMessage());
        e = assertThrows(BadInputException.class, () -> DirectorySchema.parse("s",
                "{\"id\":\"x\",\"tables\":[{\"schema\":\"public\",\"name\":\"t\",\"columns\":{\"a\":\"int8\"},"
                        + "\"primaryKey\":[\"b\"]}]}", "zero", 0));
        assertTrue(e.getMessage().contains("s: tables[0]: primary key column \"b\""), e.getMessage());
    }

    private void assertBad(String line, String expected) {
        BadInputException e = assertThrows(BadInputException.class,
                () -> TransactionLine.parse(line, "changes-000004.jsonl:7", schema));
        assertTrue(e.getMessage().startsWith("changes-000004.jsonl:7: "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
