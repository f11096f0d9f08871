package org.zrm.replicator.internal;

import java.net.URI;
import java.time.Duration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * A protocol-v6 change streamer at {@code changeStreamer.uri} (ZRM's or zero-cache's) as the
 * replicator's upstream, over a WebSocket. Delayed: it is only activated, and its URI only
 * checked, when a replicator selects it.
 */
@Component(service = ReplicatorUpstream.class, configurationPid = ReplicatorComponent.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE,
        property = ReplicatorUpstream.KIND + "=" + ReplicatorUpstream.REMOTE)
public final class RemoteUpstream implements ReplicatorUpstream {

    private final URI uri;
    private final Duration connectTimeout;
    private final int maxMessageBytes;

    /**
     * @throws IllegalArgumentException if {@code changeStreamer.uri} is empty or not a WebSocket
     *     or HTTP URI; the message names the property
     */
    @Activate
    public RemoteUpstream(ReplicatorConfig config) {
        String text = config.changeStreamer_uri() == null ? "" : config.changeStreamer_uri().strip();
        if (text.isEmpty()) {
            throw new IllegalArgumentException("changeStreamer.uri is empty, but the replicator's upstream.target"
                    + " selects the remote change streamer: set ZERO_CHANGE_STREAMER_URI (ws:// or http://)");
        }
        URI parsed;
        try {
            parsed = new URI(text);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("changeStreamer.uri is not a URI: " + e.getMessage(), e);
        }
        WebSocketChangeStreamClient.normalize(parsed); // rejects other schemes, naming the property
        this.uri = parsed;
        this.connectTimeout = Duration.ofMillis(config.changeStreamer_connectTimeoutMs());
        this.maxMessageBytes = config.changeStreamer_maxMessageBytes();
    }

    @Override
    public String kind() {
        return REMOTE;
    }

    @Override
    public ChangeStreamClient client(ProtocolCodec codec) {
        return new WebSocketChangeStreamClient(uri, codec, connectTimeout,
                WebSocketChangeStreamClient.DEFAULT_LIVENESS_TIMEOUT, maxMessageBytes);
    }
}
