package org.zrm.changestreamer.http.internal;

import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServlet;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServletFactory;

/**
 * The Jetty WebSocket servlet behind {@code /replication/*}: upgrades every request and lets the
 * {@link ReplicationEndpoint} decide, so that invalid requests are closed with upstream's reasons
 * rather than refused at the HTTP level. Needs the Jetty WebSocket container in its servlet
 * context (Felix HTTP: {@code org.apache.felix.jetty.websocket.enable=true}).
 */
class ReplicationServlet extends JettyWebSocketServlet {

    private static final long serialVersionUID = 1L;

    private final transient ReplicationEndpoint endpoint;

    ReplicationServlet(ReplicationEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    final ReplicationEndpoint endpoint() {
        return endpoint;
    }

    @Override
    protected void configure(JettyWebSocketServletFactory factory) {
        Settings settings = endpoint.settings();
        factory.setIdleTimeout(settings.idleTimeout());
        factory.setMaxTextMessageSize(settings.maxIncomingMessageBytes());
        factory.setMaxBinaryMessageSize(settings.maxIncomingMessageBytes());
        factory.setCreator((request, response) ->
                endpoint.connect(request.getHttpServletRequest().getRequestURI(), request.getParameterMap()));
    }
}
