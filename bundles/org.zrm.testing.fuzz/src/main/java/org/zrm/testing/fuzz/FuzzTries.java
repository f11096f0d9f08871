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
 */
public final class FuzzTries implements AroundPropertyHook {

    /** The system property read. */
    public static final String SCALE_PROPERTY = "zrm.fuzz.scale";

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
        return property.execute();
    }
}
