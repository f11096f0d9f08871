package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.zrm.admin.internal.AttributeRule.Kind;
import org.zrm.config.ConfigProblem;
import org.zrm.config.ConfigValidator;
import org.zrm.testing.fuzz.FuzzTries;

/**
 * Fuzzes the configuration gate (issue 16: "the .cfg parser"): whatever FileInstall and the
 * interpolation plugin hand over (strings of numbers, junk, extremes; typed values; arrays and
 * lists; filters) against metatype rules of every kind, with options and bounds (some of them
 * broken), and validators that find problems or throw.
 *
 * <p>The property: {@code check} never throws; a delivery is accepted unchanged, or rejected with
 * one problem per bad key, a first report that names the file, a replacement that is the last good
 * delivery or the input without its bad keys; and no secret value ever appears in a reason or a
 * log line.
 */
@AddLifecycleHook(FuzzTries.class)
class ConfigGateFuzzTest {

    private static final String PID = "org.zrm.fuzz";
    private static final String FILE = "file:/conf/org.zrm.fuzz.cfg";
    private static final String[] JUNK = {"", " ", "0", "-1", "1", "007", "1.5", "-0.0", "1e400", "-1e400", "NaN",
        "Infinity", "0x10", "9223372036854775808", "-9223372036854775809", "2147483648", "true", "TRUE", "yes", "x",
        "é", "\u0000", "(a=b)", "(a=", "(&(a=b)(c=d))", "(zrm.changesource.type=pg)", "*", ")(", "${x}", "$[env:X]"};

    @Property(tries = 2000)
    void anyDeliveryIsAcceptedUnchangedOrRejectedPerKeyWithoutSecrets(@ForAll long seed) {
        Random r = new Random(seed);
        String secret = "S3cr3t-" + Long.toHexString(seed);
        Map<String, AttributeRule> rules = new LinkedHashMap<>();
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("service.pid", PID);
        props.put("felix.fileinstall.filename", FILE);
        int keys = 1 + r.nextInt(6);
        for (int i = 0; i < keys; i++) {
            String key = r.nextInt(5) == 0 ? "password" + i : "key" + i;
            Kind kind = Kind.values()[r.nextInt(Kind.values().length)];
            int cardinality = r.nextInt(3) == 0 ? (r.nextBoolean() ? 3 : -3) : 0;
            List<String> options = r.nextInt(6) == 0 ? List.of("auto", "replica") : List.of();
            String min = r.nextInt(4) == 0 ? JUNK[r.nextInt(JUNK.length)] : null;
            String max = r.nextInt(4) == 0 ? JUNK[r.nextInt(JUNK.length)] : null;
            rules.put(key, new AttributeRule(key, kind, cardinality, options, min, max));
            if (r.nextInt(5) != 0) {
                props.put(key, key.startsWith("password") ? secret : value(r));
            }
        }
        if (r.nextBoolean()) {
            props.put("source.target", JUNK[r.nextInt(JUNK.length)]);
        }
        props.put("unknown.key", value(r));
        List<ConfigValidator> validators = new ArrayList<>();
        switch (r.nextInt(4)) {
            case 0 -> validators.add((pid, p) -> p.containsKey("password0")
                    ? List.of(new ConfigProblem("password0", "must not be " + p.get("password0"))) : List.of());
            case 1 -> validators.add((pid, p) -> {
                throw new IllegalStateException("validator bug with " + p.get("password0"));
            });
            default -> {
                // none
            }
        }

        ConfigGate gate = new ConfigGate(Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), 8);
        Map<String, Object> good = r.nextBoolean() ? lastGood(gate, rules) : null;
        ConfigGate.Outcome o = gate.check(PID, PID, props, rules, validators);

        if (o.accepted()) {
            assertEquals(props, o.properties());
            assertNull(o.logLine());
            return;
        }
        assertNotNull(o.logLine(), "a first rejection is reported");
        assertTrue(o.logLine().contains(FILE), o.logLine());
        for (ConfigProblem p : o.problems()) {
            assertTrue(p.key().equals("*") || props.containsKey(p.key()), "a problem for a key not delivered: " + p);
            assertFalse(p.reason().contains(secret), "a secret in a reason: " + p.reason());
        }
        assertFalse(o.logLine().contains(secret), "a secret in the log line: " + o.logLine());
        for (ConfigGate.Rejection rej : gate.rejected()) {
            assertFalse(rej.reason().contains(secret), "a secret on /status: " + rej.reason());
        }
        if (good != null) {
            for (Map.Entry<String, Object> e : good.entrySet()) {
                assertEquals(e.getValue(), o.properties().get(e.getKey()), "the last good value of " + e.getKey());
            }
        } else {
            for (ConfigProblem p : o.problems()) {
                assertFalse(!p.key().equals("*") && o.properties().containsKey(p.key()),
                        "a rejected key reached the component: " + p.key());
            }
        }
        // The same bad delivery again is not reported twice.
        assertNull(gate.check(PID, PID, props, rules, validators).logLine());
    }

    /** Delivers a configuration that every rule accepts (no keys of its own), so that it is the last good one. */
    private static Map<String, Object> lastGood(ConfigGate gate, Map<String, AttributeRule> rules) {
        Map<String, Object> good = new LinkedHashMap<>();
        good.put("service.pid", PID);
        good.put("felix.fileinstall.filename", FILE);
        good.put("unrelated", "kept");
        ConfigGate.Outcome o = gate.check(PID, PID, good, rules, List.of());
        assertTrue(o.accepted(), "the baseline delivery was rejected: " + o.problems());
        return Map.of("unrelated", "kept");
    }

    private static Object value(Random r) {
        return switch (r.nextInt(9)) {
            case 0 -> r.nextInt();
            case 1 -> r.nextLong();
            case 2 -> r.nextBoolean() ? Double.NaN : r.nextDouble() * 1e300;
            case 3 -> r.nextBoolean();
            case 4 -> new String[] {JUNK[r.nextInt(JUNK.length)], JUNK[r.nextInt(JUNK.length)]};
            case 5 -> List.of(JUNK[r.nextInt(JUNK.length)], r.nextInt(), JUNK[r.nextInt(JUNK.length)], "x", "y");
            case 6 -> "x".repeat(r.nextInt(3000));
            default -> JUNK[r.nextInt(JUNK.length)];
        };
    }
}
