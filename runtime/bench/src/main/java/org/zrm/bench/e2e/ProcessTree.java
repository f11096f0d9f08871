package org.zrm.bench.e2e;

import java.util.List;
import java.util.concurrent.TimeUnit;

/** Stopping a benchmark child process together with everything it started. */
final class ProcessTree {

    private ProcessTree() {
    }

    /**
     * SIGTERM to {@code process}, up to 60 s for it to stop on its own (a launcher stops its
     * runtime first), then SIGKILL; finally SIGKILL to any of its descendants still alive. The
     * descendants are listed before the first signal: once their parent has exited they are
     * re-parented and no longer show up as its descendants, and a forcibly killed parent can leave
     * them running.
     */
    static void stop(Process process) throws InterruptedException {
        List<ProcessHandle> tree = process.descendants().toList();
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        for (ProcessHandle p : tree) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> p).join();
            }
        }
    }
}
