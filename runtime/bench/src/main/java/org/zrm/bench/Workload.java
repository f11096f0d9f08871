package org.zrm.bench;

import java.util.List;

/**
 * One benchmark workload of {@code docs/WORKLOADS.md}. A workload measures ZRM and
 * the physical limit it is compared with in the same run, on the same cluster and data, and
 * reports ratios: absolute rates drift between runs on a 2-core machine, ratios much less.
 */
public interface Workload {

    /** The name used on the command line, e.g. {@code source-W1}. */
    String name();

    /** One line for {@code ./zrm bench help}. */
    String description();

    /**
     * Runs the workload. Implementations print their progress to {@code context.out()} and return
     * one result per measured case; the caller prints the {@code RESULT} lines and writes the JSON.
     */
    List<Result> run(BenchContext context) throws Exception;

    /**
     * The peer systems this workload can measure in ZRM's place ({@code --peer <name>}, passed on
     * as {@link BenchContext#peer()}); none by default.
     */
    default List<String> peers() {
        return List.of();
    }
}
