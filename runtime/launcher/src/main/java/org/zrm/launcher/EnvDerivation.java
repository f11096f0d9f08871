package org.zrm.launcher;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Fills in the variables zero-cache derives from others, so that the runtime's {@code .cfg} files
 * can read every value with a plain {@code $[env:...]}: {@code ZERO_CHANGE_DB} defaults to
 * {@code ZERO_UPSTREAM_DB}, {@code ZERO_CHANGE_STREAMER_PORT} to {@code ZERO_PORT + 1} and
 * {@code ZERO_LITESTREAM_PORT} to {@code ZERO_PORT + 2}, and ZRM's {@code ZRM_REPLICATOR_UPSTREAM}
 * (the replicator's DS target) to {@code remote} when {@code ZERO_CHANGE_STREAMER_URI} is set,
 * else {@code in-process}. Variables that are set are never changed.
 */
public final class EnvDerivation {
    private static final int DEFAULT_PORT = 4848;

    /**
     * The result of a derivation.
     *
     * @param environment the input plus the derived variables
     * @param derived the names that were derived (not set by the user)
     */
    public record Result(Map<String, String> environment, Set<String> derived) {}

    /**
     * Derives what is missing. An unparsable {@code ZERO_PORT} derives no ports;
     * {@link EnvValidator} reports it.
     */
    public Result derive(Map<String, String> input) {
        Map<String, String> env = new HashMap<>(input);
        Set<String> derived = new LinkedHashSet<>();
        String upstream = env.get(EnvRegistry.UPSTREAM_DB);
        if (isBlank(env.get(EnvRegistry.CHANGE_DB)) && !isBlank(upstream)) {
            env.put(EnvRegistry.CHANGE_DB, upstream);
            derived.add(EnvRegistry.CHANGE_DB);
        }
        if (isBlank(env.get(EnvRegistry.REPLICATOR_UPSTREAM))) {
            env.put(EnvRegistry.REPLICATOR_UPSTREAM, isBlank(env.get(EnvRegistry.CHANGE_STREAMER_URI)) ? "in-process" : "remote");
            derived.add(EnvRegistry.REPLICATOR_UPSTREAM);
        }
        OptionalInt port = isBlank(env.get(EnvRegistry.PORT)) ? OptionalInt.of(DEFAULT_PORT) : parse(env.get(EnvRegistry.PORT));
        if (port.isPresent()) {
            derivePort(env, derived, EnvRegistry.CHANGE_STREAMER_PORT, port.getAsInt() + 1);
            derivePort(env, derived, EnvRegistry.LITESTREAM_PORT, port.getAsInt() + 2);
        }
        return new Result(Map.copyOf(env), Set.copyOf(derived));
    }

    private static void derivePort(Map<String, String> env, Set<String> derived, String name, int value) {
        if (isBlank(env.get(name))) {
            env.put(name, Integer.toString(value));
            derived.add(name);
        }
    }

    private static OptionalInt parse(String text) {
        try {
            return OptionalInt.of(Integer.parseInt(text.strip()));
        } catch (NumberFormatException e) {
            return OptionalInt.empty();   // reported by EnvValidator, which sees the same text
        }
    }

    static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
