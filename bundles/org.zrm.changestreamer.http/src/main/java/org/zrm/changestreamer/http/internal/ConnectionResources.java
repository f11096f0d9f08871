package org.zrm.changestreamer.http.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import org.zrm.protocol.json.ProtocolCodec;

/** What every connection of an endpoint shares. */
interface ConnectionResources {

    Settings settings();

    HttpMetrics metrics();

    /** Runs the liveness pings; tasks must not block. */
    ScheduledExecutorService scheduler();

    ProtocolCodec codec();

    /**
     * The sender threads every {@code /changes} connection shares ({@code send.threads}). Tasks
     * must not block; a connection has at most one task queued or running at a time, so the
     * queue never holds more tasks than there are open connections.
     */
    Executor senders();

    /** Tracks an open connection so that it can be closed when its streamer leaves. */
    void register(WsConnection connection);

    void unregister(WsConnection connection);
}
