package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.admin.internal.AttributeRule.Kind;
import org.zrm.config.ConfigProblem;
import org.zrm.config.ConfigValidator;

class ConfigGateTest {

    private static final String PID = "org.zrm.storer";
    private static final String FILE = "file:/conf/org.zrm.storer.cfg";
    private static final Instant NOW = Instant.parse("2026-01-02T03:04:05Z");

    private static final Map<String, AttributeRule> RULES = Map.of(
            "changeLogBatchSize", new AttributeRule("changeLogBatchSize", Kind.INTEGER, 0, List.of()),
            "purgeIntervalMs", new AttributeRule("purgeIntervalMs", Kind.LONG, 0, List.of()),
            "exitOnFatal", new AttributeRule("exitOnFatal", Kind.BOOLEAN, 0, List.of()),
            "strategy", new AttributeRule("strategy", Kind.STRING, 0, List.of("auto", "replica")),
            "hosts", new AttributeRule("hosts", Kind.STRING, 2, List.of()),
            "adminPassword", new AttributeRule("adminPassword", Kind.PASSWORD, 0, List.of()),
            "ratio", new AttributeRule("ratio", Kind.DOUBLE, 0, List.of()),
            "batch", new AttributeRule("batch", Kind.INTEGER, 0, List.of(), "1", "100000"),
            "share", new AttributeRule("share", Kind.DOUBLE, 0, List.of(), "0", "1"),
            "slot", new AttributeRule("slot", Kind.STRING, 0, List.of(), "1", "63"));

    private final ConfigGate gate = new ConfigGate(Clock.fixed(NOW, ZoneOffset.UTC), 100);

    private static Map<String, Object> delivery(Object... keyValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("service.pid", PID);
        m.put("felix.fileinstall.filename", FILE);
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    private ConfigGate.Outcome check(Map<String, Object> properties, ConfigValidator... validators) {
        return gate.check(PID, PID, properties, RULES, List.of(validators));
    }

    @Test
    void aValidatorThatThrowsWithASecretInItsMessageDoesNotLeakIt() {
        // Found by ConfigGateFuzzTest: the exception text went out with only URLs masked.
        ConfigValidator broken = (pid, p) -> {
            throw new IllegalStateException("cannot use " + p.get("adminPassword"));
        };
        ConfigGate.Outcome o = check(delivery("adminPassword", "hunter2-secret"), broken);
        assertFalse(o.accepted());
        assertFalse(o.logLine().contains("hunter2-secret"), o.logLine());
        assertTrue(o.logLine().contains("cannot use " + ConfigGate.REDACTED), o.logLine());
        assertFalse(gate.rejected().get(0).reason().contains("hunter2-secret"));
    }

    @Test
    void aValidatorThatThrowsWithAUrlPasswordHasItMaskedWhateverTheDelivery() {
        ConfigValidator broken = (pid, p) -> {
            throw new IllegalStateException("cannot reach postgres://zero:pw-in-url@db.internal:5432/app");
        };
        for (Map<String, Object> d : List.of(delivery("changeLogBatchSize", "5"), new LinkedHashMap<String, Object>())) {
            ConfigGate.Outcome o = check(d, broken);
            assertFalse(o.accepted());
            assertFalse(o.logLine().contains("pw-in-url"), o.logLine());
            assertTrue(o.logLine().contains("db.internal:5432/app"), o.logLine());
        }
    }

    @Test
    void metatypeBoundsAreInclusiveAndNameTheBound() {
        assertTrue(check(delivery("batch", "1", "share", "1", "slot", "a")).accepted());
        assertTrue(check(delivery("batch", 100_000, "share", 0.0d, "slot", "x".repeat(63))).accepted());

        ConfigGate.Outcome zero = check(delivery("batch", "0"));
        assertEquals("must be at least 1: '0'", zero.problems().get(0).reason());
        assertTrue(zero.logLine().contains("key batch: must be at least 1: '0'"), zero.logLine());
        // The component keeps the last good delivery.
        assertEquals(100_000, zero.properties().get("batch"));

        assertEquals("must be at most 100000: '100001'", check(delivery("batch", 100_001)).problems().get(0).reason());
        assertEquals("must be at most 1: '1.5'", check(delivery("share", "1.5")).problems().get(0).reason());
        assertEquals("must be at least 0: '-0.1'", check(delivery("share", -0.1d)).problems().get(0).reason());
        assertEquals("must be at most 1: 'Infinity'", check(delivery("share", "Infinity")).problems().get(0).reason());
        assertEquals("must be at least 1 characters long: ''", check(delivery("slot", "")).problems().get(0).reason());
        assertEquals("must be at most 63 characters long: '" + "x".repeat(64) + "'",
                check(delivery("slot", "x".repeat(64))).problems().get(0).reason());
        // Each value of a multi-valued key is held to the bounds.
        AttributeRule many = new AttributeRule("ports", Kind.INTEGER, 3, List.of(), "1", "65535");
        assertEquals("must be at most 65535: '70000'", ConfigGate.valueProblem(many, new Integer[] {80, 70_000}));
        // A bound the bundle got wrong (not a number) is not applied rather than rejecting every file.
        assertNull(ConfigGate.valueProblem(new AttributeRule("n", Kind.LONG, 0, List.of(), "one", null), "0"));
    }

    @Test
    void aValidDeliveryPassesUnchanged() {
        Map<String, Object> good = delivery("changeLogBatchSize", " 500 ", "exitOnFatal", "TRUE", "strategy", "Replica",
                "hosts", new String[] {"a", "b"}, "ratio", "0.5", "unknownKey", "anything");
        ConfigGate.Outcome outcome = check(good);
        assertTrue(outcome.accepted());
        assertNull(outcome.logLine());
        assertEquals(good, outcome.properties());
        assertEquals(List.of(), gate.rejected());
    }

    @Test
    void aBadValueIsReplacedByTheLastGoodConfigurationAndListedUntilFixed() {
        check(delivery("changeLogBatchSize", "500", "purgeIntervalMs", "1000"));

        ConfigGate.Outcome bad = check(delivery("changeLogBatchSize", "lots", "purgeIntervalMs", "2000"));
        assertFalse(bad.accepted());
        // Every key comes from the last good delivery, also the valid ones of the rejected change:
        // a change is taken whole or not at all.
        assertEquals("500", bad.properties().get("changeLogBatchSize"));
        assertEquals("1000", bad.properties().get("purgeIntervalMs"));
        assertEquals(FILE, bad.properties().get("felix.fileinstall.filename"));
        assertEquals("configuration rejected: " + FILE + " (pid " + PID + "): key changeLogBatchSize: not an integer"
                + " (a whole number from -2147483648 to 2147483647): 'lots'; the component keeps its last good"
                + " configuration until the file is fixed", bad.logLine());
        assertEquals(List.of(new ConfigGate.Rejection(PID, FILE, "changeLogBatchSize",
                "not an integer (a whole number from -2147483648 to 2147483647): 'lots'", NOW)), gate.rejected());
        assertEquals(1, gate.rejectedPids());

        ConfigGate.Outcome fixed = check(delivery("changeLogBatchSize", "700"));
        assertTrue(fixed.accepted());
        assertTrue(fixed.cleared());
        assertEquals(List.of(), gate.rejected());
        assertEquals(0, gate.rejectedPids());
        assertEquals(1, gate.rejectionsTotal());
    }

    @Test
    void theSameBadDeliveryAskedForByEveryConsumerIsReportedOnce() {
        check(delivery("changeLogBatchSize", "500"));
        assertTrue(check(delivery("changeLogBatchSize", "x")).logLine() != null);
        ConfigGate.Outcome again = check(delivery("changeLogBatchSize", "x"));
        assertNull(again.logLine());
        assertEquals("500", again.properties().get("changeLogBatchSize"));
        assertEquals(1, gate.rejectionsTotal());
        // A different bad value is a new change: reported again.
        assertTrue(check(delivery("changeLogBatchSize", "y")).logLine() != null);
        assertEquals(2, gate.rejectionsTotal());
        assertEquals("not an integer (a whole number from -2147483648 to 2147483647): 'y'", gate.rejected().get(0).reason());
    }

    @Test
    void withoutAnEarlierGoodConfigurationTheBadKeysAreLeftOutSoDefaultsApply() {
        ConfigGate.Outcome first = check(delivery("changeLogBatchSize", "x", "purgeIntervalMs", "1000"));
        assertFalse(first.accepted());
        assertFalse(first.properties().containsKey("changeLogBatchSize"));
        assertEquals("1000", first.properties().get("purgeIntervalMs"));
        assertTrue(first.logLine().endsWith("no earlier good configuration: the component runs without the rejected"
                + " keys, so their defaults apply, until the file is fixed"), first.logLine());
    }

    @Test
    void typesCardinalityAndOptionsAreChecked() {
        assertEquals("not a long (a whole number from -9223372036854775808 to 9223372036854775807): '1.5'",
                ConfigGate.valueProblem(RULES.get("purgeIntervalMs"), "1.5"));
        assertEquals("not an integer (a whole number from -2147483648 to 2147483647): '3000000000'",
                ConfigGate.valueProblem(RULES.get("changeLogBatchSize"), "3000000000"));
        assertEquals("not a boolean (true or false): 'yes'", ConfigGate.valueProblem(RULES.get("exitOnFatal"), "yes"));
        assertEquals("must be one of auto, replica: 'backup'", ConfigGate.valueProblem(RULES.get("strategy"), "backup"));
        assertEquals("takes at most 2 values, got 3",
                ConfigGate.valueProblem(RULES.get("hosts"), new String[] {"a", "b", "c"}));
        assertEquals("takes one value, got 2",
                ConfigGate.valueProblem(RULES.get("changeLogBatchSize"), List.of("1", "2")));
        assertEquals("not a double (a decimal number): 'half'", ConfigGate.valueProblem(RULES.get("ratio"), "half"));
        assertNull(ConfigGate.valueProblem(RULES.get("purgeIntervalMs"), 5L));
        assertNull(ConfigGate.valueProblem(RULES.get("exitOnFatal"), Boolean.FALSE));
    }

    @Test
    void everyProblemIsOnTheOneLine() {
        ConfigGate.Outcome bad = check(delivery("changeLogBatchSize", "x", "exitOnFatal", "maybe"));
        assertEquals(2, bad.problems().size());
        assertTrue(bad.logLine().contains("key changeLogBatchSize: not an integer"), bad.logLine());
        assertTrue(bad.logLine().contains("; key exitOnFatal: not a boolean (true or false): 'maybe'"), bad.logLine());
        assertFalse(bad.logLine().contains("\n"));
    }

    @Test
    void targetFiltersMustParse() {
        ConfigGate.Outcome bad = check(delivery("changeSource.target", "(zrm.changesource.type=pg"));
        assertEquals(List.of("changeSource.target"), bad.problems().stream().map(ConfigProblem::key).toList());
        assertTrue(bad.problems().get(0).reason().startsWith("not a valid LDAP filter ("), bad.problems().get(0).reason());
        assertTrue(bad.problems().get(0).reason().endsWith("): (zrm.changesource.type=pg"));
        assertTrue(check(delivery("changeSource.target", "(zrm.changesource.type=pg)")).accepted());
    }

    @Test
    void secretsNeverAppearInTheLineOrTheStatus() {
        Map<String, AttributeRule> rules = Map.of(
                "adminPassword", new AttributeRule("adminPassword", Kind.PASSWORD, 0, List.of("a")),
                "authToken", new AttributeRule("authToken", Kind.STRING, 0, List.of("a")),
                "upstreamDb", new AttributeRule("upstreamDb", Kind.STRING, 0, List.of("a")));
        ConfigValidator quoting = (pid, props) -> List.of(new ConfigProblem("apiSecret",
                "too short: " + props.get("apiSecret")));
        ConfigGate.Outcome bad = gate.check(PID, PID, delivery("adminPassword", "hunter2", "authToken", "tok-123",
                "upstreamDb", "postgresql://u:pw-456@h/db"), rules, List.of());
        assertEquals(3, bad.problems().size());
        ConfigGate.Outcome quoted = gate.check("org.zrm.other", "org.zrm.other",
                delivery("apiSecret", "s3cr3t-789"), Map.of(), List.of(quoting));
        String everything = bad.logLine() + quoted.logLine() + gate.rejected();
        for (String secret : List.of("hunter2", "tok-123", "pw-456", "s3cr3t-789")) {
            assertFalse(everything.contains(secret), secret + " in " + everything);
        }
        assertTrue(bad.logLine().contains("key adminPassword: must be one of a: <redacted>"), bad.logLine());
        assertTrue(quoted.logLine().contains("key apiSecret: too short: <redacted>"), quoted.logLine());
    }

    @Test
    void componentValidatorsRunAfterTheTypeChecksAndAFailingOneRejects() {
        ConfigValidator range = (pid, props) -> Integer.parseInt(props.get("changeLogBatchSize").toString()) < 1
                ? List.of(new ConfigProblem("changeLogBatchSize", "must be at least 1")) : List.of();
        assertEquals(List.of(new ConfigProblem("changeLogBatchSize", "must be at least 1")),
                check(delivery("changeLogBatchSize", "0"), range).problems());
        // A non-number never reaches the validator (it would throw): the type check reports it.
        assertEquals(1, check(delivery("changeLogBatchSize", "nope"), range).problems().size());
        ConfigValidator broken = (pid, props) -> {
            throw new IllegalStateException("bug");
        };
        ConfigGate.Outcome outcome = check(delivery("changeLogBatchSize", "5"), broken);
        assertFalse(outcome.accepted());
        assertTrue(outcome.problems().get(0).reason().contains("failed: java.lang.IllegalStateException: bug"));
    }

    @Test
    void aDeletedConfigurationForgetsItsLastGoodOne() {
        check(delivery("changeLogBatchSize", "500"));
        check(delivery("changeLogBatchSize", "x"));
        gate.deleted(PID);
        assertEquals(List.of(), gate.rejected());
        assertFalse(check(delivery("changeLogBatchSize", "x")).properties().containsKey("changeLogBatchSize"));
    }

    @Test
    void pastTheBoundNewConfigurationsAreStillCheckedButNotRemembered() {
        ConfigGate small = new ConfigGate(Clock.fixed(NOW, ZoneOffset.UTC), 1);
        small.check("org.zrm.a", "org.zrm.a", Map.of("n", "1"), Map.of("n", RULES.get("changeLogBatchSize")), List.of());
        small.check("org.zrm.b", "org.zrm.b", Map.of("n", "1"), Map.of("n", RULES.get("changeLogBatchSize")), List.of());
        ConfigGate.Outcome b = small.check("org.zrm.b", "org.zrm.b", Map.of("n", "x"),
                Map.of("n", RULES.get("changeLogBatchSize")), List.of());
        assertFalse(b.accepted());
        assertTrue(b.logLine() != null);
        assertFalse(b.properties().containsKey("n"));
        ConfigGate.Outcome a = small.check("org.zrm.a", "org.zrm.a", Map.of("n", "x"),
                Map.of("n", RULES.get("changeLogBatchSize")), List.of());
        assertEquals("1", a.properties().get("n"));
    }
}
