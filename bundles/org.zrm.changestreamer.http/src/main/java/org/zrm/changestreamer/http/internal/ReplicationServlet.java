package org.zrm.changestreamer.http.internal;

import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

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
    static final int INPUT_BUFFER_BYTES = 1024;

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ReplicationServlet.class);

    private final transient ReplicationEndpoint endpoint;
    private final transient AddressAllowList allow;

    ReplicationServlet(ReplicationEndpoint endpoint) {
        this(endpoint, AddressAllowList.parse(""));
    }

    /** @param allow who may connect; others get 403 before any upgrade */
    ReplicationServlet(ReplicationEndpoint endpoint, AddressAllowList allow) {
        this.endpoint = endpoint;
        this.allow = allow;
    }

    final ReplicationEndpoint endpoint() {
        return endpoint;
    }

    // Jetty's WebSocket servlet finds its context handler through the servlet context, or, for a
    // context it does not recognise (the HTTP Whiteboard wraps it), through the context of the
    // current thread. The whiteboard may call init() on a framework thread, outside any Jetty
    // scope, where that lookup fails; so Jetty's init is deferred to the first request, which
    // Jetty always dispatches inside the context's scope. Guarded by "this".
    private transient ServletConfig pendingConfig;
    private transient volatile boolean initialized;

    @Override
    public void init(ServletConfig config) throws ServletException {
        synchronized (this) {
            pendingConfig = config;
            initialized = false;
        }
    }

    @Override
    public void destroy() {
        synchronized (this) {
            if (initialized) {
                super.destroy(); // Jetty's destroy assumes its init ran
            }
            initialized = false;
            pendingConfig = null;
        }
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        String remote = request.getRemoteAddr();
        if (!allow.permits(remote)) {
            if (allow.shouldLog(remote)) {
                LOG.warn("change-streamer: refused a connection from {}: not in the allow-list ({}); further refusals of"
                        + " this address are logged once a minute", remote, allow);
            }
            endpoint.metrics().rejected();
            response.sendError(HttpServletResponse.SC_FORBIDDEN, "address not allowed");
            return;
        }
        if (!initialized) {
            synchronized (this) {
                if (!initialized) {
                    if (pendingConfig == null) {
                        throw new ServletException("replication servlet used before init()");
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
        Settings settings = endpoint.settings();
        factory.setIdleTimeout(settings.idleTimeout());
        factory.setMaxTextMessageSize(settings.maxIncomingMessageBytes());
        factory.setMaxBinaryMessageSize(settings.maxIncomingMessageBytes());
        // Clients only send acks ({"ack":n}, a dozen bytes). Jetty sizes both its network read
        // buffer and the text builder it allocates for every incoming message by this value
        // (default 4 KiB), so with one ack per message sent the default made each ack cost a 4 KiB
        // allocation; 1 KiB still reads dozens of acks per system call.
        factory.setInputBufferSize(INPUT_BUFFER_BYTES);
        factory.setCreator((request, response) ->
                endpoint.connect(request.getHttpServletRequest().getRequestURI(), request.getParameterMap()));
    }
}
