package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.zrm.changesource.pg.internal.SourceFixture.*;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/**
 * Every type of spec §7 through the replication stream, as the JSON zero-cache emits (values
 * converted by the {@code types} package, transaction {@code json:"s"}).
 */
@PostgresTest
class TypesStreamPgTest {

    @Test
    void everyTypeThroughStreaming(PgDatabase db) throws Exception {
        PgChangeSource source = source(settings(db.uri()));
        try (Connection c = db.connect()) {
            exec(c, "CREATE TYPE mood AS ENUM ('happy', 'sad')",
                    "CREATE TABLE types(id INT PRIMARY KEY, b BOOL, by BYTEA, i2 INT2, i4 INT4, i8 INT8, f4 FLOAT4,"
                            + " f8 FLOAT8, f8nan FLOAT8, num NUMERIC, t TEXT, vc VARCHAR(5), bp CHAR(5), ch \"char\","
                            + " u UUID, j JSON, jb JSONB, d DATE, dinf DATE, tm TIME, tmz TIMETZ, ts TIMESTAMP,"
                            + " tstz TIMESTAMPTZ, tsinf TIMESTAMPTZ, e mood, ia INT4[], ta TEXT[], ea mood[],"
                            + " jba JSONB[], ip INET, iv INTERVAL, o OID)",
                    "CREATE PUBLICATION types_pub FOR TABLE types");
            String start = createSlot(c, "types_slot");
            PgChangeStream stream = source.openStream("types_slot", List.of("types_pub"), start);
            exec(c, "INSERT INTO types VALUES (1, true, '\\x0102ff', -5, 2147483647, 9007199254740993, 0.1, 1.5e300,"
                    + " 'NaN', 12345.678909876, 'héllo \"q\"', 'abc', 'ab', 'x',"
                    + " 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{\"a\": 1}', '{\"b\":2,\"a\":1}', '2025-03-19',"
                    + " 'infinity', '12:34:56.789123', '12:34:56.789+02', '2019-01-12 00:30:35.381101',"
                    + " '2019-01-12T00:30:35.381101Z', '-infinity', 'happy', '{1,NULL,3}', '{\"a b\",c}',"
                    + " '{happy,sad}', ARRAY['{\"x\":1}'::jsonb], '192.168.0.1/24', '1 year 2 mons', 42)",
                    "INSERT INTO types (id) VALUES (2)");
            List<ChangeStreamMessage> msgs = takeTransactions(stream, 2, Duration.ofSeconds(20));
            String json = CODEC.encode(msgs.get(1));
            String row = json.substring(json.indexOf(",\"new\":") + 7, json.length() - 2);
            assertEquals("{\"id\":1,\"b\":true,\"by\":{\"type\":\"Buffer\",\"data\":[1,2,255]},\"i2\":-5,"
                    + "\"i4\":2147483647,\"i8\":9007199254740993,\"f4\":0.1,\"f8\":1.5e+300,\"f8nan\":null,"
                    + "\"num\":12345.678909876,\"t\":\"héllo \\\"q\\\"\",\"vc\":\"abc\",\"bp\":\"ab   \",\"ch\":\"x\","
                    + "\"u\":\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\",\"j\":\"{\\\"a\\\": 1}\","
                    + "\"jb\":\"{\\\"a\\\": 1, \\\"b\\\": 2}\",\"d\":1742342400000,\"dinf\":null,\"tm\":45296789,"
                    + "\"tmz\":38096789,\"ts\":1547253035381.101,\"tstz\":1547253035381.101,\"tsinf\":null,"
                    + "\"e\":\"happy\",\"ia\":[1,null,3],\"ta\":[\"a b\",\"c\"],\"ea\":[\"happy\",\"sad\"],"
                    + "\"jba\":[{\"x\":1}],\"ip\":\"192.168.0.1/24\",\"iv\":\"1 year 2 mons\",\"o\":42}", row);
            String nulls = CODEC.encode(msgs.get(4));
            assertEquals("{\"id\":2,\"b\":null,\"by\":null,\"i2\":null,\"i4\":null,\"i8\":null,\"f4\":null,\"f8\":null,"
                    + "\"f8nan\":null,\"num\":null,\"t\":null,\"vc\":null,\"bp\":null,\"ch\":null,\"u\":null,\"j\":null,"
                    + "\"jb\":null,\"d\":null,\"dinf\":null,\"tm\":null,\"tmz\":null,\"ts\":null,\"tstz\":null,"
                    + "\"tsinf\":null,\"e\":null,\"ia\":null,\"ta\":null,\"ea\":null,\"jba\":null,\"ip\":null,"
                    + "\"iv\":null,\"o\":null}", nulls.substring(nulls.indexOf(",\"new\":") + 7, nulls.length() - 2));

            // A type created after the stream started (enum + its array type) is resolved on demand.
            exec(c, "CREATE TYPE color AS ENUM ('red')", "ALTER TABLE types ADD COLUMN cs color[]",
                    "ALTER PUBLICATION types_pub SET TABLE types",
                    "INSERT INTO types (id, cs) VALUES (3, '{red,red}')");
            List<ChangeStreamMessage> later = takeTransactions(stream, 1, Duration.ofSeconds(20));
            String late = CODEC.encode(later.get(1));
            assertEquals(true, late.endsWith("\"cs\":[\"red\",\"red\"]}}]"), late);
        } finally {
            source.stop();
        }
    }
}
