package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes the launcher's {@code ZERO_*} checks (issue #16, fuzzed inputs): random environments of
 * the variables the launcher reads, with valid, borderline and broken values, go through
 * {@link EnvDerivation} and then {@link EnvValidator}, as {@code zrm run} does. The property:
 * neither throws nor hangs; every problem is one line naming the variable it is about; no
 * password appears in a problem; and a clean result means the ports the launcher parses next
 * are numbers it can use. {@code -Dzrm.fuzz.scale=N} runs N times as many (docs/RELIABILITY.md).
 */
@AddLifecycleHook(FuzzTries.class)
class EnvFuzzTest {

    private static final String MARKER = "PwLauncherSecret";
    private static final List<String> NAMES = List.of(EnvRegistry.UPSTREAM_DB, EnvRegistry.UPSTREAM_TYPE,
            EnvRegistry.CHANGE_DB, EnvRegistry.CHANGE_STREAMER_URI, EnvRegistry.REPLICATOR_UPSTREAM, EnvRegistry.PORT,
            EnvRegistry.CHANGE_STREAMER_PORT, EnvRegistry.LITESTREAM_PORT, EnvRegistry.APP_ID, EnvRegistry.SHARD_NUM,
            EnvRegistry.SHARD_ID, EnvRegistry.CHANGE_LOG_BATCH_SIZE, EnvRegistry.ZRM_EMBEDDED_PG_PORT);
    private static final String[] VALUES = {"", " ", "0", "1", "-1", "4848", "65535", "65536", "2147483647",
        "2147483648", "99999999999999999999", " 4849 ", "+80", "0x10", "1e3", "\u0664\u0668\u0664\u0668", "pg", "custom",
        "p g", "pg)(x=*", "zero", "Zero", "my_app", "a-b", "http://h:1", "ws://u:" + MARKER + "@h/x", "wss://", "ftp://h",
        "postgres://u:" + MARKER + "@h:5432/db", "postgresql://u:" + MARKER + "@/db", "postgres://u:" + MARKER + "@h:99999/db",
        "postgres:u:" + MARKER + "@h/db", "mysql://u:" + MARKER + "@h/db", "jdbc:postgresql://h/db", "postgres://h/%zz",
        "postgres://[::1]/db?sslmode=disable", "in-process", "remote", "\u0000", "\n", "x".repeat(5000)};

    @Property(tries = 3000)
    void derivedEnvironmentValidatesToOneLinePerProblem(@ForAll long seed) {
        Random r = new Random(seed);
        Map<String, String> env = new HashMap<>();
        for (int i = r.nextInt(8); i >= 0; i--) {
            String value = VALUES[r.nextInt(VALUES.length)];
            if (r.nextInt(4) == 0) {
                StringBuilder b = new StringBuilder(value);
                b.insert(r.nextInt(b.length() + 1), (char) r.nextInt(0x80));
                value = b.toString();
            }
            env.put(NAMES.get(r.nextInt(NAMES.size())), value);
        }
        List<String> problems = bounded(() ->
                new EnvValidator().validate(new EnvDerivation().derive(env).environment()), env);
        for (String p : problems) {
            assertTrue(NAMES.stream().anyMatch(p::startsWith), () -> "problem names no variable: " + p);
            assertFalse(p.contains(MARKER), () -> "problem shows a password: " + p);
        }
        if (problems.isEmpty()) {
            // RunCommand parses the streamer port of the derived environment next.
            String port = new EnvDerivation().derive(env).environment().get(EnvRegistry.CHANGE_STREAMER_PORT);
            int p = Integer.parseInt(port.strip());
            assertTrue(p >= 1 && p <= 65535, "port " + port + " for " + env);
        }
    }

    /**
     * Found by this fuzzer: a URI put into a variable that is not a URI (here the change-source
     * type) was echoed with its password in the problem line.
     */
    @net.jqwik.api.Example
    void aUriInTheWrongVariableIsMasked() {
        for (String value : List.of("mysql://u:" + MARKER + "@h/db", "postgres:u:" + MARKER + "@h/db")) {
            for (String name : List.of(EnvRegistry.UPSTREAM_TYPE, EnvRegistry.PORT, EnvRegistry.APP_ID,
                    EnvRegistry.SHARD_NUM, EnvRegistry.CHANGE_LOG_BATCH_SIZE)) {
                List<String> problems = new EnvValidator().validate(Map.of(name, value));
                assertTrue(problems.size() == 1 && problems.get(0).startsWith(name), problems::toString);
                assertFalse(problems.get(0).contains(MARKER), problems::toString);
            }
        }
    }

    private static final Bounded BOUNDED = new Bounded(java.time.Duration.ofSeconds(5));

    @net.jqwik.api.lifecycle.AfterContainer
    static void stopWorker() {
        BOUNDED.close();
    }

    private static <T> T bounded(java.util.concurrent.Callable<T> call, Map<String, String> input) {
        long started = System.nanoTime();
        Bounded.Outcome<T> out;
        try {
            out = BOUNDED.call(call);
        } catch (AssertionError e) {
            throw new AssertionError("environment " + input + ": " + e.getMessage(), e);
        }
        if (out.thrown() != null) {
            throw new AssertionError("environment " + input + ": " + out.thrown(), out.thrown());
        }
        long ms = (System.nanoTime() - started) / 1_000_000;
        assertTrue(ms < 1000, () -> "environment " + input + " took " + ms + " ms to validate");
        return out.value();
    }
}
