package org.zrm.changestreamer.http.internal;

import java.util.concurrent.ScheduledExecutorService;
import org.zrm.protocol.json.ProtocolCodec;

/** What every connection of an endpoint shares. */
interface ConnectionResources {

    Settings settings();

    HttpMetrics metrics();

    /** Runs the liveness pings; tasks must not block. */
    ScheduledExecutorService scheduler();

    ProtocolCodec codec();

    /** Tracks an open connection so that it can be closed when its streamer leaves. */
    void register(WsConnection connection);

    void unregister(WsConnection connection);
}
