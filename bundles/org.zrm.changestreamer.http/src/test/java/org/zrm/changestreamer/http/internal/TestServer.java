package org.zrm.changestreamer.http.internal;

import java.net.InetSocketAddress;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * An embedded Jetty 12 (ee10) on 127.0.0.1 with the servlets mapped as the HTTP Whiteboard maps
 * them in the runtime.
 */
final class TestServer implements AutoCloseable {

    final FakeChangeStreamer streamer = new FakeChangeStreamer();
    final HttpMetrics metrics = new HttpMetrics();
    final ReplicationEndpoint endpoint;
    private final Server server;
    private final int port;

    TestServer(Settings settings) throws Exception {
        this(settings, AddressAllowList.parse(""));
    }

    TestServer(Settings settings, AddressAllowList allow) throws Exception {
        endpoint = new ReplicationEndpoint(settings, metrics);
        endpoint.bind(streamer);
        server = new Server(new InetSocketAddress("127.0.0.1", 0));
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addServlet(new ServletHolder(new ReplicationServlet(endpoint, allow)), ReplicationServletComponent.PATTERN);
        HealthServlet health = new HealthServlet();
        context.addServlet(new ServletHolder(health), "/");
        context.addServlet(new ServletHolder(health), "/keepalive");
        server.setHandler(context);
        server.start();
        port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    int port() {
        return port;
    }

    String ws(String pathAndQuery) {
        return "ws://127.0.0.1:" + port + pathAndQuery;
    }

    String http(String pathAndQuery) {
        return "http://127.0.0.1:" + port + pathAndQuery;
    }

    @Override
    public void close() throws Exception {
        endpoint.close();
        server.stop();
    }
}
