package org.zrm.bench.e2e;

import java.nio.file.Path;

/**
 * A change streamer in a child process that the end-to-end benchmarks subscribe to over protocol
 * v6: ZRM's runtime ({@link RuntimeProcess}) or a peer system measured the same way
 * ({@link ZeroCachePeer}).
 */
interface ChangeStreamerProcess extends AutoCloseable {

    /** The change-streamer port on 127.0.0.1 ({@code ZERO_PORT + 1}). */
    int port();

    /** The process's log file, named in error messages. */
    Path log();

    /**
     * What the streamer reports about itself after a run, for the JSON file (a map or a string);
     * never throws: a status that cannot be read is reported as such.
     */
    Object statusSummary();

    /** Stops the process and everything it started. */
    @Override
    void close() throws InterruptedException;
}
