package org.zrm.config;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes the configuration value parsers of {@code org.zrm.config} (issue #16, fuzzed inputs):
 * {@link PostgresUri#parse} either returns a pgjdbc URL or throws an
 * {@link IllegalArgumentException} that names the setting and never shows the password;
 * {@link CommandLine#split} returns words or rejects an unterminated quote. Inputs are URIs built
 * from valid and broken parts (percent escapes, IPv6 hosts, ports, queries), then mutated.
 * {@code -Dzrm.fuzz.scale=N} runs N times as many (docs/RELIABILITY.md).
 */
@AddLifecycleHook(FuzzTries.class)
class ConfigValueFuzzTest {

    private static final String SETTING = "upstream.db";
    private static final String[] SCHEMES = {"postgres://", "postgresql://", "Postgres://", "http://", "jdbc:postgresql://",
        "postgres:", "postgres:/", "", "postgresql://://", "ws://"};
    private static final String[] USERS = {"", "u", "u%40x", "%", "%zz", "u%4", "us+er", "%C3%A9", "%FF", ":", "a b"};
    // No '/', '?' or '#': they end the user info in every URI parser (libpq's, WHATWG's, Java's),
    // so a password containing one is read as host, path or query, and is no longer a password.
    private static final String[] PASSWORD_PARTS = {"", "%", "%zz", "%4", "%40", "+", "@", ":", "%C3", " ", "%2F"};
    private static final String[] HOSTS = {"h", "db.internal", "127.0.0.1", "[::1]", "::1", "", "h_o", "[zz]", "[", "h%20"};
    private static final String[] PORTS = {"", ":", ":5432", ":99999", ":-1", ":abc", ":0", ":99999999999999999999"};
    private static final String[] PATHS = {"", "/", "/db", "/d%20b", "/%zz", "/a/b", "/%", "/%C3%A9", "/%FF%FE"};
    private static final String[] QUERIES = {"", "?sslmode=disable", "?ssl=no-verify&x=1", "?%zz=1", "?a=%zz", "?&&",
        "?sslmode", "?ssl=%", "?password=%zz", "#frag", "?a=b#c"};

    /** A URI with a password containing {@code marker}, which no error message may show. */
    private record Candidate(String uri, String marker) {}

    @Property(tries = 3000)
    void postgresUriParsesOrFailsNamingTheSettingWithoutThePassword(@ForAll long seed) {
        Candidate c = candidate(seed);
        String message = bounded(() -> {
            try {
                PostgresUri parsed = PostgresUri.parse(c.uri(), SETTING);
                assertTrue(parsed.jdbcUrl().startsWith("jdbc:postgresql:"), parsed.jdbcUrl());
                assertFalse(parsed.toString().contains(c.marker()), "toString shows the password: " + parsed);
                parsed.connectionProperties();
                return null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }, c.uri());
        if (message != null) {
            assertTrue(message.startsWith(SETTING + " "), () -> "message does not name the setting: " + message
                    + " (input " + c.uri() + ")");
            assertFalse(message.contains(c.marker()), () -> "message shows the password: " + message);
        }
    }

    @Property(tries = 1000)
    void commandLineSplitsOrRejectsAnUnterminatedQuote(@ForAll String text) {
        bounded(() -> {
            try {
                List<String> words = CommandLine.split(text);
                words.forEach(w -> assertNotNull(w));
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage().startsWith("unterminated "), e.getMessage());
            }
            return null;
        }, text);
    }

    /**
     * Found by this fuzzer: a URI whose user info the masking pattern could not read (a doubled
     * {@code ://}, a password containing {@code /}) was printed with its password in the error.
     */
    @Example
    void oddUserInfoIsMaskedInErrors() {
        for (String uri : List.of("postgresql://://us+er:PwSecret@@:5432./db", "postgres://u:Pw/Secret@h/db",
                "postgres://u:PwSecret@@h:5432/db", "postgres:u:PwSecret@h/%zz", "postgres:%zz:PwSecret@h/db")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PostgresUri.parse(uri, SETTING));
            assertTrue(e.getMessage().startsWith(SETTING + " "), e.getMessage());
            assertFalse(e.getMessage().contains("Secret"), e.getMessage());
        }
    }

    /** Found by this fuzzer: a JDBC URL, taken as it is, showed its user info in {@code toString()}. */
    @Example
    void jdbcUrlWithUserInfoIsMaskedInToString() {
        PostgresUri uri = PostgresUri.parse("jdbc:postgresql://u:PwSecret@h/db?password=PwOther", SETTING);
        assertFalse(uri.toString().contains("PwSecret"), uri.toString());
        assertFalse(uri.toString().contains("PwOther"), uri.toString());
    }

    /** Bad percent escapes are rejected by the URI syntax check, which names the setting. */
    @Example
    void badPercentEscapesNameTheSettingAndHideThePassword() {
        for (String uri : List.of("postgres://u:PwSecret%zz@h/db", "postgres://%zz@h/db", "postgres://u@h/%zz",
                "postgres://u@h/db?%zz=1", "postgres://u@h/db?ssl=%")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PostgresUri.parse(uri, SETTING));
            assertTrue(e.getMessage().startsWith(SETTING + " "), e.getMessage());
            assertFalse(e.getMessage().contains("PwSecret"), e.getMessage());
        }
    }

    private static Candidate candidate(long seed) {
        Random r = new Random(seed);
        String marker = "Pw" + Long.toString(Math.abs(r.nextLong() % 1_000_000_000L) + 1_000_000_000L, 36);
        StringBuilder password = new StringBuilder(marker);
        for (int i = r.nextInt(3); i > 0; i--) {
            password.insert(r.nextInt(password.length() + 1), pick(r, PASSWORD_PARTS));
        }
        StringBuilder uri = new StringBuilder(pick(r, SCHEMES));
        uri.append(pick(r, USERS)).append(':').append(password).append('@');
        int afterUserInfo = uri.length();
        uri.append(pick(r, HOSTS)).append(pick(r, PORTS)).append(pick(r, PATHS)).append(pick(r, QUERIES));
        for (int i = r.nextInt(3); i > 0; i--) {
            // Mutations away from the password only, so that the marker stays recognisable as one.
            int from = afterUserInfo;
            if (from >= uri.length()) {
                break;
            }
            int at = from + r.nextInt(uri.length() - from);
            switch (r.nextInt(3)) {
                case 0 -> uri.deleteCharAt(at);
                case 1 -> uri.insert(at, (char) (0x20 + r.nextInt(0x5f)));
                default -> uri.insert(at, pick(r, PASSWORD_PARTS));
            }
        }
        return new Candidate(r.nextInt(10) == 0 ? " " + uri + "\n" : uri.toString(), marker);
    }

    private static String pick(Random r, String[] options) {
        return options[r.nextInt(options.length)];
    }

    private static <T> T bounded(Supplier<T> call, String input) {
        try {
            return CompletableFuture.supplyAsync(call).get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError("input " + input + ": " + e.getCause(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("input " + input + ": no result within 5 s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
