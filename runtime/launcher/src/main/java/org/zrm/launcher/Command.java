package org.zrm.launcher;

import java.util.List;

/** A {@code zrm} subcommand. New ones (e.g. {@code bench}) implement this and are registered in {@link Main}. */
public interface Command {
    /** @return the word that selects it, e.g. {@code run} */
    String name();

    /** @return its arguments for the usage text, e.g. {@code <workload>}; empty for none */
    String arguments();

    /** @return one line for the usage text */
    String summary();

    /**
     * Runs it.
     *
     * @param args the arguments after the command's name
     * @return the process exit code
     * @throws LaunchException for a failure whose message is all the user needs
     */
    int run(List<String> args);
}
