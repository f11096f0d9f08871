package org.zrm.it;

import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServlet;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServletFactory;

/** A Jetty-native WebSocket endpoint published through the HTTP Whiteboard, as ZRM's streamer will be. */
public class EchoServlet extends JettyWebSocketServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void configure(JettyWebSocketServletFactory factory) {
        factory.setCreator((request, response) -> new EchoSocket());
    }
}
