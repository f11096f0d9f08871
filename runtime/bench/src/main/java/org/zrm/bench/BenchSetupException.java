package org.zrm.bench;

/**
 * This machine lacks something a workload needs before it can start (a tool, an installation):
 * {@code ./zrm bench} prints the message, which says how to provide it, instead of a stack trace.
 */
public final class BenchSetupException extends Exception {

    private static final long serialVersionUID = 1L;

    public BenchSetupException(String message) {
        super(message);
    }
}
