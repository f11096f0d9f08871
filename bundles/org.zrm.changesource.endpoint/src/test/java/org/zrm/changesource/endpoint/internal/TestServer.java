package org.zrm.changesource.endpoint.internal;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.ee10.websocket.server.config.JettyWebSocketServletContainerInitializer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.zrm.changestreamer.ChangeStreamer;

/** The endpoint's servlet on an embedded Jetty 12 (ee10) at {@code /changes/v0/stream}. */
final class TestServer implements AutoCloseable {

    static final String KEY = "s3cret-key";

    final Endpoint endpoint;
    private final Server server;
    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    private final int port;

    TestServer(ChangeStreamer streamer, InitialSnapshot snapshot, Settings settings) throws Exception {
        endpoint = new Endpoint(new EndpointRequest.Served(new ApiKey(KEY), "zero", 0, List.of("zero_data")), settings,
                scheduler, snapshot);
        if (streamer != null) {
            endpoint.bind(streamer);
        }
        server = new Server(new InetSocketAddress("127.0.0.1", 0));
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        JettyWebSocketServletContainerInitializer.configure(context, null);
        context.addServlet(new ServletHolder(new StreamServlet(endpoint)), EndpointComponent.PATTERN);
        server.setHandler(context);
        server.start();
        port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    TestServer(ChangeStreamer streamer) throws Exception {
        this(streamer, null, new Settings(Duration.ofSeconds(30), 1 << 20, 4096));
    }

    /** @return the stream URL with the valid key and shard plus {@code extra} query text */
    String url(String extra) {
        return "ws://127.0.0.1:" + port + EndpointComponent.PATTERN + "?apiKey=" + KEY
                + "&appID=zero&shardNum=0&publications=zero_data" + extra;
    }

    String rawUrl(String query) {
        return "ws://127.0.0.1:" + port + EndpointComponent.PATTERN + query;
    }

    @Override
    public void close() throws Exception {
        endpoint.close();
        server.stop();
        scheduler.shutdownNow();
    }
}
