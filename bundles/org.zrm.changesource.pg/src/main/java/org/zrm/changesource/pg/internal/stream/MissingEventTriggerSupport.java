package org.zrm.changesource.pg.internal.stream;

/**
 * A schema change seen in degraded mode (no event triggers), which cannot be replicated. Named as
 * upstream names it because the name is part of the {@code reset-required} reason that operators
 * and zero-cache's own tooling see.
 */
public final class MissingEventTriggerSupport extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The suffix every message ends with (upstream's wording). */
    public static final String SUFFIX = ". Schema changes cannot be reliably replicated without event trigger support.";

    /** @param what the difference found, e.g. {@code tables created or dropped} */
    public MissingEventTriggerSupport(String what) {
        super(what + SUFFIX);
    }
}
