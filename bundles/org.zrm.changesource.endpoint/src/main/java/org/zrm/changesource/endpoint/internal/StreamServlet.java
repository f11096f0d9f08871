package org.zrm.changesource.endpoint.internal;

import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServlet;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServletFactory;

/**
 * The Jetty WebSocket servlet at {@code /changes/v0/stream}. Every request is upgraded and
 * validated afterwards, so that a bad request gets a close code and a reason: zero-cache's client
 * ({@code ws}) reports a refused upgrade only as "Unexpected server response: 4xx", while it logs
 * a close code and reason in full.
 */
final class StreamServlet extends JettyWebSocketServlet {

    private static final long serialVersionUID = 1L;

    private final transient Endpoint endpoint;

    // Jetty's init needs the servlet context's Jetty scope, which the HTTP Whiteboard may not
    // provide on the thread that calls init(); it is deferred to the first request (as the
    // change-streamer's servlet does). Guarded by "this".
    private transient ServletConfig pendingConfig;
    private transient volatile boolean initialized;

    StreamServlet(Endpoint endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public void init(ServletConfig config) {
        synchronized (this) {
            pendingConfig = config;
            initialized = false;
        }
    }

    @Override
    public void destroy() {
        synchronized (this) {
            if (initialized) {
                super.destroy();
            }
            initialized = false;
            pendingConfig = null;
        }
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        if (!initialized) {
            synchronized (this) {
                if (!initialized) {
                    if (pendingConfig == null) {
                        throw new ServletException("custom endpoint servlet used before init()");
                    }
                    super.init(pendingConfig);
                    initialized = true;
                }
            }
        }
        super.service(request, response);
    }

    @Override
    protected void configure(JettyWebSocketServletFactory factory) {
        Settings s = endpoint.settings();
        factory.setMaxTextMessageSize(s.maxIncomingChars());
        factory.setMaxBinaryMessageSize(s.maxIncomingChars());
        // Liveness is the endpoint's pings; Jetty's idle timeout only catches what they miss.
        factory.setIdleTimeout(s.pingInterval().multipliedBy(3));
        // The query is read at the upgrade: the request is gone once the socket is open.
        factory.setCreator((req, resp) -> endpoint.connect(req.getParameterMap()));
    }
}
