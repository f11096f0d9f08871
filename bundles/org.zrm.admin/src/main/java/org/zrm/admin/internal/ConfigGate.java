package org.zrm.admin.internal;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.zrm.config.ConfigProblem;
import org.zrm.config.ConfigValidator;
import org.zrm.secret.Secrets;

/**
 * Decides, for each delivery of a ZRM configuration, whether the component may see it: the generic
 * checks from the metatype (type, cardinality, options, min/max), every {@code *.target} key parses as an
 * LDAP filter, then the component's own {@link ConfigValidator}s. A rejected delivery is replaced by
 * the PID's last good configuration (or, when there is none yet, by the delivery without its bad
 * keys, so their defaults apply), and stays listed in {@link #rejected()} until a later delivery of
 * the PID is valid.
 *
 * <p>Configuration Admin asks once per consumer of a configuration, so the same bad delivery is
 * seen several times: it is reported (and counted) once.
 *
 * <p>Thread-safe; every method is in-memory work only (it runs on Configuration Admin's thread).
 * At most {@code maxPids} PIDs are remembered: past that, a new PID's good configuration is not
 * kept, so a later bad delivery of it is treated like a first one (bad keys left out), and its
 * rejection is logged but not listed.
 */
final class ConfigGate {

    /** Shown instead of a secret value. */
    static final String REDACTED = "<redacted>";

    /** Bookkeeping keys, never checked, and kept from the current delivery in a replacement. */
    private static final Set<String> BOOKKEEPING = Set.of("service.pid", "service.factoryPid",
            "felix.fileinstall.filename", "service.bundleLocation", "component.name", "component.id");

    /** One rejected key of a PID, as {@code /status} lists it. */
    record Rejection(String pid, String file, String key, String reason, Instant since) {
    }

    /**
     * @param properties what the component is to receive (the input itself when accepted)
     * @param problems empty when accepted
     * @param logLine the ERROR line to write, or {@code null} when nothing is to be logged (accepted,
     *        or this rejection was already reported)
     * @param cleared whether this valid delivery clears an earlier rejection
     */
    record Outcome(Map<String, Object> properties, List<ConfigProblem> problems, String logLine, boolean cleared) {
        boolean accepted() {
            return problems.isEmpty();
        }
    }

    private record Pending(String fingerprint, List<Rejection> rejections) {
    }

    private final Clock clock;
    private final int maxPids;
    private final Map<String, Map<String, Object>> lastGood = new LinkedHashMap<>();
    private final Map<String, Pending> pending = new TreeMap<>();
    private long rejectionsTotal;

    ConfigGate(Clock clock, int maxPids) {
        this.clock = clock;
        this.maxPids = maxPids;
    }

    /**
     * @param pid the PID, or the factory PID of a factory configuration, whose rules apply
     * @param configPid the configuration's own PID (differs from {@code pid} for factory instances);
     *        state is kept per configuration
     * @param properties the delivery, after interpolation
     * @param rules the metatype's attributes of {@code pid}; empty when it has no metatype
     * @param validators the validators registered for {@code pid}
     */
    synchronized Outcome check(String pid, String configPid, Map<String, Object> properties,
            Map<String, AttributeRule> rules, List<ConfigValidator> validators) {
        List<ConfigProblem> problems = problems(pid, properties, rules, validators);
        if (problems.isEmpty()) {
            boolean cleared = pending.remove(configPid) != null;
            if (lastGood.containsKey(configPid) || lastGood.size() < maxPids) {
                lastGood.put(configPid, Map.copyOf(withoutNulls(properties)));
            }
            return new Outcome(properties, List.of(), null, cleared);
        }
        String file = file(properties);
        Map<String, Object> good = lastGood.get(configPid);
        Map<String, Object> replacement = new LinkedHashMap<>();
        if (good != null) {
            replacement.putAll(good);
            for (String key : BOOKKEEPING) {
                if (properties.containsKey(key)) {
                    replacement.put(key, properties.get(key));
                }
            }
        } else {
            replacement.putAll(properties);
            problems.forEach(p -> replacement.remove(p.key()));
        }
        String fingerprint = fingerprint(properties);
        Pending earlier = pending.get(configPid);
        if (earlier != null && earlier.fingerprint().equals(fingerprint)) {
            return new Outcome(replacement, problems, null, false);
        }
        rejectionsTotal++;
        Instant now = clock.instant();
        List<Rejection> rejections = problems.stream()
                .map(p -> new Rejection(configPid, file, p.key(), p.reason(), now)).toList();
        if (pending.containsKey(configPid) || pending.size() < maxPids) {
            pending.put(configPid, new Pending(fingerprint, rejections));
        }
        return new Outcome(replacement, problems, logLine(configPid, file, problems, good != null), false);
    }

    /** Forgets a deleted configuration: a new one of the same PID starts without a last good one. */
    synchronized void deleted(String configPid) {
        lastGood.remove(configPid);
        pending.remove(configPid);
    }

    /** The rejections not yet fixed, by PID. */
    synchronized List<Rejection> rejected() {
        return pending.values().stream().flatMap(p -> p.rejections().stream()).toList();
    }

    synchronized int rejectedPids() {
        return pending.size();
    }

    /** How many distinct bad deliveries were rejected since start. */
    synchronized long rejectionsTotal() {
        return rejectionsTotal;
    }

    private static List<ConfigProblem> problems(String pid, Map<String, Object> properties,
            Map<String, AttributeRule> rules, List<ConfigValidator> validators) {
        List<ConfigProblem> problems = new ArrayList<>();
        for (Map.Entry<String, Object> e : new TreeMap<>(withoutNulls(properties)).entrySet()) {
            String key = e.getKey();
            if (BOOKKEEPING.contains(key)) {
                continue;
            }
            AttributeRule rule = rules.get(key);
            String reason = key.endsWith(".target") ? filterProblem(e.getValue())
                    : rule != null ? valueProblem(rule, e.getValue()) : null;
            if (reason != null) {
                problems.add(new ConfigProblem(key, reason));
            }
        }
        if (!problems.isEmpty()) {
            // Component rules assume well-typed values; asking them about "abc" as a number only
            // adds noise to the one line the operator reads.
            return problems;
        }
        Map<String, Object> readOnly = Map.copyOf(withoutNulls(properties));
        for (ConfigValidator validator : validators) {
            try {
                List<ConfigProblem> found = validator.validate(pid, readOnly);
                for (ConfigProblem p : found) {
                    problems.add(new ConfigProblem(p.key(), redact(p.key(), readOnly.get(p.key()), p.reason(), rules)));
                }
            } catch (RuntimeException ex) {
                // A broken validator must not let an unchecked configuration through; the
                // component keeps its last good one and the operator sees why.
                // Its message may quote any value of the delivery, secrets included.
                problems.add(new ConfigProblem("*", "validator " + validator.getClass().getName() + " failed: "
                        + redactAll(String.valueOf(ex), readOnly, rules)));
            }
        }
        return problems;
    }

    static String valueProblem(AttributeRule rule, Object value) {
        List<Object> values = values(value);
        int max = rule.cardinality() == 0 ? 1 : Math.abs(rule.cardinality());
        if (values.size() > max) {
            return max == 1 ? "takes one value, got " + values.size()
                    : "takes at most " + max + " values, got " + values.size();
        }
        for (Object v : values) {
            String reason = typeProblem(rule, v);
            if (reason == null && !rule.options().isEmpty() && !matchesOption(rule.options(), v)) {
                reason = "must be one of " + String.join(", ", rule.options());
            }
            if (reason == null) {
                reason = rangeProblem(rule, v);
            }
            if (reason != null) {
                return reason + ": " + shown(rule, v);
            }
        }
        return null;
    }

    private static String typeProblem(AttributeRule rule, Object v) {
        String s = v.toString().strip();
        try {
            switch (rule.kind()) {
                case LONG -> {
                    if (!(v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte)) {
                        Long.parseLong(s);
                    }
                }
                case INTEGER -> {
                    if (!(v instanceof Integer || v instanceof Short || v instanceof Byte)) {
                        Integer.parseInt(s);
                    }
                }
                case SHORT -> Short.parseShort(s);
                case BYTE -> Byte.parseByte(s);
                case DOUBLE, FLOAT -> {
                    if (!(v instanceof Number)) {
                        double d = Double.parseDouble(s);
                        if (Double.isNaN(d)) {
                            return "not a number";
                        }
                    }
                }
                case BOOLEAN -> {
                    // DS would read anything but "true" as false; a typo must not silently switch
                    // a setting off.
                    if (!(v instanceof Boolean) && !s.equalsIgnoreCase("true") && !s.equalsIgnoreCase("false")) {
                        return "not a boolean (true or false)";
                    }
                }
                case CHARACTER -> {
                    if (!(v instanceof Character) && s.length() != 1) {
                        return "not a single character";
                    }
                }
                case STRING, PASSWORD -> {
                    // any text
                }
            }
        } catch (NumberFormatException e) {
            return "not " + article(rule.kind()) + " " + rule.kind().name().toLowerCase(Locale.ROOT)
                    + " (" + range(rule.kind()) + ")";
        }
        return null;
    }

    /**
     * The metatype's {@code min}/{@code max}, inclusive: on the value for numbers, on the length for
     * text (metatype spec 105.7.3). A bound that does not parse for the attribute's type is a
     * mistake in the bundle, not in the operator's file, and is not applied.
     */
    private static String rangeProblem(AttributeRule rule, Object v) {
        if (rule.min() == null && rule.max() == null) {
            return null;
        }
        String s = v.toString().strip();
        switch (rule.kind()) {
            case STRING, PASSWORD -> {
                BigDecimal length = BigDecimal.valueOf(v.toString().length());
                if (below(length, rule.min())) {
                    return "must be at least " + rule.min() + " characters long";
                }
                if (above(length, rule.max())) {
                    return "must be at most " + rule.max() + " characters long";
                }
            }
            case BOOLEAN, CHARACTER -> {
                // Bounds on these are not used by ZRM's components.
            }
            default -> {
                BigDecimal value;
                if (rule.kind() == AttributeRule.Kind.DOUBLE || rule.kind() == AttributeRule.Kind.FLOAT) {
                    double d = v instanceof Number n ? n.doubleValue() : Double.parseDouble(s);
                    if (Double.isNaN(d)) {
                        return "not a number";
                    }
                    if (Double.isInfinite(d)) {
                        return d > 0 ? (rule.max() != null ? "must be at most " + rule.max() : null)
                                : (rule.min() != null ? "must be at least " + rule.min() : null);
                    }
                    value = BigDecimal.valueOf(d);
                } else {
                    value = BigDecimal.valueOf(v instanceof Number n ? n.longValue() : Long.parseLong(s));
                }
                if (below(value, rule.min())) {
                    return "must be at least " + rule.min();
                }
                if (above(value, rule.max())) {
                    return "must be at most " + rule.max();
                }
            }
        }
        return null;
    }

    private static boolean below(BigDecimal value, String bound) {
        BigDecimal b = bound(bound);
        return b != null && value.compareTo(b) < 0;
    }

    private static boolean above(BigDecimal value, String bound) {
        BigDecimal b = bound(bound);
        return b != null && value.compareTo(b) > 0;
    }

    private static BigDecimal bound(String bound) {
        if (bound == null || bound.isBlank()) {
            return null;
        }
        try {
            return new BigDecimal(bound.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String article(AttributeRule.Kind kind) {
        return kind == AttributeRule.Kind.INTEGER ? "an" : "a";
    }

    private static String range(AttributeRule.Kind kind) {
        return switch (kind) {
            case LONG -> "a whole number from " + Long.MIN_VALUE + " to " + Long.MAX_VALUE;
            case INTEGER -> "a whole number from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE;
            case SHORT -> "a whole number from " + Short.MIN_VALUE + " to " + Short.MAX_VALUE;
            case BYTE -> "a whole number from " + Byte.MIN_VALUE + " to " + Byte.MAX_VALUE;
            default -> "a decimal number";
        };
    }

    private static boolean matchesOption(List<String> options, Object v) {
        // Components compare their words stripped and without case (e.g. the backup strategy).
        String s = v.toString().strip();
        return options.stream().anyMatch(o -> o.equalsIgnoreCase(s));
    }

    private static String filterProblem(Object value) {
        for (Object v : values(value)) {
            try {
                FrameworkUtil.createFilter(v.toString());
            } catch (InvalidSyntaxException e) {
                return "not a valid LDAP filter (" + e.getMessage() + "): " + Secrets.maskUrls(v.toString());
            }
        }
        return null;
    }

    private static List<Object> values(Object value) {
        if (value instanceof Collection<?> c) {
            return new ArrayList<>(c);
        }
        if (value != null && value.getClass().isArray()) {
            int n = java.lang.reflect.Array.getLength(value);
            List<Object> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(java.lang.reflect.Array.get(value, i));
            }
            return out;
        }
        return value == null ? List.of() : List.of(value);
    }

    private static String shown(AttributeRule rule, Object v) {
        if (rule.kind() == AttributeRule.Kind.PASSWORD || Secrets.isSecretName(rule.id())) {
            return REDACTED;
        }
        return "'" + Secrets.mask(rule.id(), v) + "'";
    }

    /** {@code text} with the value of every secret key of the delivery taken out. */
    private static String redactAll(String text, Map<String, Object> properties, Map<String, AttributeRule> rules) {
        String out = text;
        for (Map.Entry<String, Object> e : properties.entrySet()) {
            out = withoutSecretValue(e.getKey(), e.getValue(), out, rules);
        }
        return Secrets.maskUrls(out);
    }

    /** A validator's reason, with the value taken out when the key is secret. */
    private static String redact(String key, Object value, String reason, Map<String, AttributeRule> rules) {
        return Secrets.maskUrls(withoutSecretValue(key, value, reason, rules));
    }

    private static String withoutSecretValue(String key, Object value, String reason, Map<String, AttributeRule> rules) {
        AttributeRule rule = rules.get(key);
        boolean secret = Secrets.isSecretName(key) || (rule != null && rule.kind() == AttributeRule.Kind.PASSWORD);
        String out = reason;
        if (secret && value != null) {
            for (Object v : values(value)) {
                String s = v.toString();
                if (!s.isEmpty()) {
                    out = out.replace(s, REDACTED);
                }
            }
        }
        return out;
    }

    private static String logLine(String pid, String file, List<ConfigProblem> problems, boolean hadGood) {
        StringBuilder b = new StringBuilder("configuration rejected: ").append(file).append(" (pid ").append(pid)
                .append("): ");
        for (int i = 0; i < problems.size(); i++) {
            ConfigProblem p = problems.get(i);
            b.append(i == 0 ? "" : "; ").append("key ").append(p.key()).append(": ").append(p.reason());
        }
        b.append(hadGood ? "; the component keeps its last good configuration until the file is fixed"
                : "; no earlier good configuration: the component runs without the rejected keys, so their"
                        + " defaults apply, until the file is fixed");
        return b.toString();
    }

    static String file(Map<String, Object> properties) {
        Object f = properties.get("felix.fileinstall.filename");
        return f == null ? "(no file: set through Configuration Admin)" : f.toString();
    }

    private static Map<String, Object> withoutNulls(Map<String, Object> properties) {
        Map<String, Object> out = new LinkedHashMap<>();
        properties.forEach((k, v) -> {
            if (k != null && v != null) {
                out.put(k, v);
            }
        });
        return out;
    }

    private static String fingerprint(Map<String, Object> properties) {
        StringBuilder b = new StringBuilder();
        new TreeMap<>(withoutNulls(properties)).forEach((k, v) -> b.append(k).append('=')
                .append(v.getClass().isArray() ? Arrays.deepToString(values(v).toArray()) : v.toString())
                .append('\n'));
        return b.toString();
    }
}
