package org.zrm.changesource.pg.internal.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.changesource.pg.internal.types.PgValueFormatException;
import org.zrm.pgcluster.PgCluster;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.TestPostgres;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes {@link PgOutputParser} with mutated real captures (issue #16, fuzzed inputs). The
 * captures are the pgoutput v1 messages a real Postgres 15 (the shared test cluster) writes for a
 * table with every common column type: begin and commit, relation, type, insert, update with key
 * and old tuples, an unchanged TOAST value, delete, truncate and a logical message, read with
 * {@code pg_logical_slot_peek_binary_changes}. Values go through the real catalog's parsers.
 *
 * <p>The property: parsing a mutated message (bit flips, overwritten bytes, length fields set to
 * extremes, truncation, insertion, deletion) returns a message or throws
 * {@link PgOutputFormatException} or {@link PgValueFormatException}; never another exception,
 * never longer than the deadline, never an allocation out of proportion to the message. And the
 * parser stays sound: the unmutated capture parsed afterwards by the same parser gives the same
 * messages as on a fresh parser. {@code -Dzrm.fuzz.scale=N} runs N times as many
 * (docs/RELIABILITY.md).
 */
@AddLifecycleHook(FuzzTries.class)
@net.jqwik.api.Tag("pg")
class PgOutputCaptureFuzzPgTest {

    private static final Duration DEADLINE = Duration.ofSeconds(5);
    private static final long ALLOC_PER_BYTE = 64;
    private static final long ALLOC_FIXED = 4L << 20;

    private static PgDatabase db;
    private static Bounded bounded;
    private static List<byte[]> capture;
    private static ColumnParsers parsers;
    private static List<String> baseline;

    @BeforeContainer
    static void capture() throws Exception {
        // jqwik properties cannot take JUnit 5 extension parameters, so this uses the JVM-wide cluster.
        PgCluster cluster = TestPostgres.jvmCluster();
        db = PgDatabase.create(cluster, "fuzz");
        bounded = new Bounded(DEADLINE);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TYPE mood AS ENUM ('sad', 'happy')");
            s.execute("CREATE TABLE fz (id int PRIMARY KEY, i2 smallint, i8 bigint, n numeric, f4 real, f8 float8,"
                    + " b bool, t text, vc varchar(10), by bytea, ts timestamp, tstz timestamptz, d date, tm time,"
                    + " tmtz timetz, iv interval, u uuid, j json, jb jsonb, ia int[], ta text[], m mood, big text)");
            s.execute("ALTER TABLE fz REPLICA IDENTITY FULL");
            s.execute("CREATE TABLE fk (a text PRIMARY KEY, b int, big text)");
            s.execute("CREATE PUBLICATION fzpub FOR TABLE fz, fk");
            s.execute("SELECT pg_create_logical_replication_slot('fzslot', 'pgoutput')");
            s.execute("INSERT INTO fz VALUES (1, -32768, 9223372036854775807, 12345678901234567890.123456789, 1.5,"
                    + " -1e308, true, 'h\u00e9llo \"quoted\" \\ back', 'short', '\\x00ff10', '2024-02-29 23:59:59.999999',"
                    + " '1999-12-31 23:59:59.5+05:30', '0001-01-01', '24:00:00', '12:00:00+14', '1 year 2 mons -3 days 04:05:06',"
                    + " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\":[1,2,{\"b\":null}]}', '{\"k\": 1e2, \"s\": \"x\"}',"
                    + " '{1,NULL,3}', '{\"a,b\",\"c\\\"d\",NULL}', 'happy', repeat('x', 5000))");
            s.execute("INSERT INTO fz (id, f8, ts, d, n) VALUES (2, 'NaN', 'infinity', '-infinity', 'NaN')");
            s.execute("UPDATE fz SET t = 'changed', ia = '{}' WHERE id = 1"); // big stays: an unchanged TOAST value
            s.execute("INSERT INTO fk VALUES ('k1', 1, repeat('y', 4000)), ('k2', 2, NULL)");
            s.execute("UPDATE fk SET a = 'k3' WHERE a = 'k1'"); // key change: a key tuple
            s.execute("UPDATE fk SET b = 5 WHERE a = 'k2'");
            s.execute("DELETE FROM fk WHERE a = 'k2'");
            s.execute("DELETE FROM fz WHERE id = 2");
            s.execute("SELECT pg_logical_emit_message(true, 'zrm-fuzz', 'hello')");
            s.execute("TRUNCATE fz, fk RESTART IDENTITY CASCADE");
            capture = new ArrayList<>();
            try (ResultSet rs = s.executeQuery("SELECT data FROM pg_logical_slot_peek_binary_changes('fzslot', NULL, NULL,"
                    + " 'proto_version', '1', 'publication_names', 'fzpub', 'messages', 'true')")) {
                while (rs.next()) {
                    capture.add(rs.getBytes(1));
                }
            }
            s.execute("SELECT pg_drop_replication_slot('fzslot')");
            PgTypeCatalog catalog = PgTypeCatalog.load(c);
            parsers = new CatalogColumnParsers(catalog, () -> catalog);
        }
        baseline = parseAll(new PgOutputParser(parsers));
    }

    @AfterContainer
    static void stop() {
        if (bounded != null) {
            bounded.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @Example
    void captureHasEveryMessageKind() {
        String tags = capture.stream().map(m -> String.valueOf((char) m[0])).distinct().sorted()
                .reduce("", String::concat);
        assertEquals("BCDIMRTUY", tags, "message kinds captured");
        assertTrue(baseline.stream().anyMatch(m -> m.contains("Update") && m.contains("key={a=k1}")), "key tuple");
    }

    @Property(tries = 3000)
    void mutatedCapturesParseOrFailTyped(@ForAll long seed) {
        Random r = new Random(seed);
        PgOutputParser parser = new PgOutputParser(parsers);
        int target = r.nextInt(capture.size());
        // The messages before the mutated one, so that it meets the relation cache of a real stream.
        for (int i = 0; i < target; i++) {
            parse(parser, capture.get(i), i);
        }
        byte[] mutated = mutate(capture.get(target), r);
        Bounded.Outcome<PgOutputMessage> out = bounded.call(() -> parser.parse(mutated, 0, mutated.length));
        long bound = ALLOC_FIXED + ALLOC_PER_BYTE * mutated.length;
        assertTrue(out.allocatedBytes() <= bound, () -> "allocated " + out.allocatedBytes() + " bytes for a "
                + mutated.length + "-byte message (bound " + bound + "): " + hex(mutated));
        Throwable t = out.thrown();
        if (t != null && !(t instanceof PgOutputFormatException) && !(t instanceof PgValueFormatException)) {
            throw new AssertionError("untyped " + t + " for message " + target + " mutated to " + hex(mutated), t);
        }
        if (t != null) {
            assertTrue(t.getMessage() != null && !t.getMessage().isBlank(), "message of " + t);
        }
        // The same parser, given the real stream again from its start, reads it as a fresh one does.
        assertEquals(baseline, parseAll(parser), () -> "parser state after message " + target + " mutated to "
                + hex(mutated));
    }

    @Property(tries = 1000)
    void randomBytesParseOrFailTyped(@ForAll byte[] bytes) {
        PgOutputParser parser = new PgOutputParser(parsers);
        for (int i = 0; i < capture.size(); i++) {
            if (capture.get(i)[0] == 'R') {
                parse(parser, capture.get(i), i);
            }
        }
        Bounded.Outcome<PgOutputMessage> out = bounded.call(() -> parser.parse(bytes, 0, bytes.length));
        Throwable t = out.thrown();
        if (t != null && !(t instanceof PgOutputFormatException) && !(t instanceof PgValueFormatException)) {
            throw new AssertionError("untyped " + t + " for " + hex(bytes), t);
        }
    }

    private static List<String> parseAll(PgOutputParser parser) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < capture.size(); i++) {
            out.add(render(parse(parser, capture.get(i), i)));
        }
        return out;
    }

    private static PgOutputMessage parse(PgOutputParser parser, byte[] m, int index) {
        try {
            return parser.parse(m, 0, m.length);
        } catch (RuntimeException e) {
            throw new AssertionError("unmutated message " + index + " failed: " + e, e);
        }
    }

    /** Records print arrays and lambdas by identity; the rest of their text is compared. */
    private static String render(PgOutputMessage m) {
        String s = m.toString().replaceAll("@[0-9a-f]+", "@");
        if (m instanceof PgOutputMessage.Message msg) {
            s += Arrays.toString(msg.content());
        }
        return s;
    }

    private static byte[] mutate(byte[] original, Random r) {
        byte[] b = original.clone();
        int n = 1 + r.nextInt(4);
        for (int k = 0; k < n && b.length > 0; k++) {
            int at = 1 + r.nextInt(Math.max(1, b.length - 1)); // the tag stays, mostly
            at = Math.min(at, b.length - 1);
            switch (r.nextInt(8)) {
                case 0 -> b[at] ^= (byte) (1 << r.nextInt(8));
                case 1 -> b[at] = (byte) r.nextInt(256);
                case 2 -> { // a 16- or 32-bit field set to an extreme
                    int width = r.nextBoolean() ? 2 : 4;
                    byte fill = switch (r.nextInt(3)) {
                        case 0 -> (byte) 0xFF;
                        case 1 -> (byte) 0x7F;
                        default -> 0;
                    };
                    for (int i = 0; i < width && at + i < b.length; i++) {
                        b[at + i] = i == 0 || fill != (byte) 0x7F ? fill : (byte) 0xFF;
                    }
                }
                case 3 -> b = Arrays.copyOf(b, at); // truncated
                case 4 -> { // bytes inserted
                    byte[] extra = new byte[1 + r.nextInt(8)];
                    r.nextBytes(extra);
                    byte[] c = new byte[b.length + extra.length];
                    System.arraycopy(b, 0, c, 0, at);
                    System.arraycopy(extra, 0, c, at, extra.length);
                    System.arraycopy(b, at, c, at + extra.length, b.length - at);
                    b = c;
                }
                case 5 -> { // bytes deleted
                    int len = Math.min(1 + r.nextInt(8), b.length - at);
                    byte[] c = new byte[b.length - len];
                    System.arraycopy(b, 0, c, 0, at);
                    System.arraycopy(b, at + len, c, at, b.length - at - len);
                    b = c;
                }
                case 6 -> b[at] = (byte) "tnubKONdfi\0".charAt(r.nextInt(11)); // a plausible kind byte
                default -> b[0] = (byte) "BCORIUDTMYX".charAt(r.nextInt(11)); // another message's tag
            }
        }
        return b;
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(b.length, 400); i++) {
            s.append(String.format("%02x", b[i]));
        }
        return b.length > 400 ? s + "...(" + b.length + " bytes)" : s.toString();
    }
}
