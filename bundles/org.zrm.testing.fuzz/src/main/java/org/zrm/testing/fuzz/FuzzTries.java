package org.zrm.testing.fuzz;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Scales a fuzz property's {@code tries} by the system property {@code zrm.fuzz.scale} (default 1),
 * so that the normal build runs each fuzzer for a few seconds and an opt-in run
 * ({@code -Dzrm.fuzz.scale=200}, see docs/RELIABILITY.md) runs the same properties for longer.
 * Registered with {@code @AddLifecycleHook(FuzzTries.class)}.
 *
 * <p>It also chooses the seed. The normal build (scale 1) is reproducible: each property runs a
 * fixed seed derived from its class and method name, so a green commit stays green and a CI run
 * cannot fail on inputs no one has seen before. New inputs come from the opt-in run, which draws a
 * random seed per property (jqwik prints it with any failure). {@code -Dzrm.fuzz.seed=N} replays
 * seed N everywhere, {@code -Dzrm.fuzz.seed=random} draws random seeds at scale 1 too. A seed
 * written on the property itself ({@code @Property(seed = …)}) always wins.
 */
public final class FuzzTries implements AroundPropertyHook {

    /** The system property read. */
    public static final String SCALE_PROPERTY = "zrm.fuzz.scale";

    /** The system property that overrides the seed: a number, or {@code random}. */
    public static final String SEED_PROPERTY = "zrm.fuzz.seed";

    /** Created by jqwik for {@code @AddLifecycleHook}. */
    public FuzzTries() {
    }

    /** Registered on a test class, it applies to the class's properties. */
    @Override
    public PropagationMode propagateTo() {
        return PropagationMode.ALL_DESCENDANTS;
    }

    @Override
    public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
        int scale = Integer.getInteger(SCALE_PROPERTY, 1);
        if (scale > 1 && !context.targetMethod().isAnnotationPresent(net.jqwik.api.Example.class)) {
            int tries = context.attributes().tries().orElse(1000);
            context.attributes().setTries((int) Math.min(Integer.MAX_VALUE, (long) tries * scale));
        }
        String seed = seedFor(System.getProperty(SEED_PROPERTY), scale,
                context.containerClass().getName() + "#" + context.targetMethod().getName());
        if (seed != null && context.attributes().seed().isEmpty()) {
            context.attributes().setSeed(seed);
        }
        return property.execute();
    }

    /**
     * The seed to run, or {@code null} for jqwik's own random one.
     *
     * @param configured the value of {@value #SEED_PROPERTY}, or {@code null}
     * @param scale the value of {@value #SCALE_PROPERTY}
     * @param propertyName a stable name of the property, from which the fixed seed is derived
     * @return a decimal seed, or {@code null}
     * @throws IllegalArgumentException if {@code configured} is neither a number nor {@code random}
     */
    static String seedFor(String configured, int scale, String propertyName) {
        if (configured == null || configured.isBlank()) {
            return scale > 1 ? null : Long.toString(fixedSeed(propertyName));
        }
        if (configured.equalsIgnoreCase("random")) {
            return null;
        }
        try {
            return Long.toString(Long.parseLong(configured.trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SEED_PROPERTY + " must be a whole number or 'random', got '"
                    + configured + "'", e);
        }
    }

    /** FNV-1a over the name, so that each property gets its own seed and keeps it across builds. */
    private static long fixedSeed(String propertyName) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < propertyName.length(); i++) {
            h ^= propertyName.charAt(i);
            h *= 0x100000001b3L;
        }
        return h & Long.MAX_VALUE;
    }
}
