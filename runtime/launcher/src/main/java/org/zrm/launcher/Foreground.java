package org.zrm.launcher;

import java.io.IOException;

/** Runs a tool's child process in the foreground, sharing this terminal, for commands such as bench and soak. */
final class Foreground {

    private Foreground() {
    }

    /**
     * Starts {@code builder} with inherited I/O and waits for it.
     *
     * @param what the child, for messages, e.g. "the benchmark JVM"
     * @return the child's exit code
     * @throws LaunchException if it cannot be started, or this thread is interrupted meanwhile
     */
    static int run(ProcessBuilder builder, String what) {
        try {
            return builder.inheritIO().start().waitFor();
        } catch (IOException e) {
            throw new LaunchException("cannot start " + what + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LaunchException("interrupted while " + what + " ran");
        }
    }
}
