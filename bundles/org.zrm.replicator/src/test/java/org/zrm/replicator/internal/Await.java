package org.zrm.replicator.internal;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition on the replicator's status, which offers no change signal to tests; the
 * condition is re-checked every 10 ms for at most 10 s.
 */
final class Await {

    private Await() {}

    static void until(String what, BooleanSupplier condition) throws InterruptedException {
        until(what, condition, () -> "");
    }

    static void until(String what, BooleanSupplier condition, Supplier<String> detail) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + " " + detail.get());
            }
            Thread.sleep(10);
        }
    }
}
