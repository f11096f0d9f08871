package org.zrm.changestreamer.http.internal;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The servlet behind {@code /replication/*}: performs the WebSocket opening handshake (RFC 6455
 * §4.2) itself and hands the socket to a {@link WebSocketWire}, which speaks the protocol directly
 * on Jetty's endpoint (see there for why). Every valid upgrade is accepted and the
 * {@link ReplicationEndpoint} decides, so that invalid paths and queries are closed with upstream's
 * reasons rather than refused at the HTTP level.
 *
 * <p>Refused at the HTTP level, each with a reason in the body: an address outside the allow-list
 * (403), a request that is not a WebSocket upgrade (400), another WebSocket version (426 with
 * {@code Sec-WebSocket-Version: 13}), and an upgrade over anything but HTTP/1.1 (400). No
 * subprotocol and no extension is negotiated (upstream offers none; a client offering
 * {@code permessage-deflate} gets plain frames, which RFC 6455 allows).
 *
 * <p>The socket is taken over the way Jetty's own WebSocket upgrade does it: the response is a
 * 101 and the request carries the new connection in {@link HttpStream#UPGRADE_CONNECTION_ATTRIBUTE};
 * once the response is written, Jetty's HTTP/1.1 connection replaces itself with it.
 */
class ReplicationServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    /**
     * The read buffer of a connection. Clients only send acks ({@code {"ack":n}}, a dozen bytes
     * plus a 6-byte frame header), so 1 KiB reads dozens of acks per system call; a larger frame
     * grows it for that frame, up to {@code receive.maxMessageBytes}.
     */
    static final int INPUT_BUFFER_BYTES = 1024;
    /** RFC 6455 §1.3. */
    private static final String ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServlet.class);

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
        if (!"GET".equals(request.getMethod()) || !hasToken(request.getHeaders("Upgrade"), "websocket")
                || !hasToken(request.getHeaders("Connection"), "upgrade")) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST,
                    "Expected a WebSocket upgrade (GET with Upgrade: websocket and Connection: Upgrade)");
            return;
        }
        if (!"13".equals(request.getHeader("Sec-WebSocket-Version"))) {
            response.setHeader("Sec-WebSocket-Version", "13");
            response.sendError(426, "Unsupported WebSocket version " + request.getHeader("Sec-WebSocket-Version")
                    + "; supported: 13");
            return;
        }
        String key = request.getHeader("Sec-WebSocket-Key");
        if (key == null || key.isBlank()) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST, "Missing request header Sec-WebSocket-Key");
            return;
        }
        key = key.trim();
        if (!isNonce(key)) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST,
                    "Sec-WebSocket-Key is not the base64 encoding of 16 bytes");
            return;
        }
        if (request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null) {
            // The bytes after the request head belong to the WebSocket: a body would be read as frames.
            response.sendError(HttpServletResponse.SC_BAD_REQUEST, "A WebSocket upgrade request has no body");
            return;
        }
        ServletContextRequest core = ServletContextRequest.getServletContextRequest(request);
        ConnectionMetaData connection = core.getConnectionMetaData();
        if (!"HTTP/1.1".equals(connection.getProtocol())) {
            response.sendError(HttpServletResponse.SC_BAD_REQUEST, "WebSocket upgrades need HTTP/1.1, not "
                    + connection.getProtocol());
            return;
        }
        Map<String, List<String>> query = new LinkedHashMap<>();
        request.getParameterMap().forEach((name, values) -> query.put(name, List.of(values)));
        WsConnection peer = endpoint.connect(request.getRequestURI(), query);
        EndPoint socket = connection.getConnection().getEndPoint();
        Settings settings = endpoint.settings();
        Connector connector = connection.getConnector();
        WebSocketWire wire = new WebSocketWire(socket, connector.getExecutor(), connector.getScheduler(),
                connector.getByteBufferPool(), peer, INPUT_BUFFER_BYTES, settings.maxIncomingMessageBytes(),
                settings.idleTimeout().toMillis());
        core.setAttribute(HttpStream.UPGRADE_CONNECTION_ATTRIBUTE, wire);
        response.setStatus(HttpServletResponse.SC_SWITCHING_PROTOCOLS);
        response.setHeader("Upgrade", "websocket");
        response.setHeader("Connection", "Upgrade");
        response.setHeader("Sec-WebSocket-Accept", acceptKey(key));
    }

    /** @return the {@code Sec-WebSocket-Accept} value for a client's key (RFC 6455 §4.2.2) */
    static String acceptKey(String key) {
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            return Base64.getEncoder().encodeToString(sha1.digest((key + ACCEPT_GUID).getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-1, which every Java platform must provide", e);
        }
    }

    /** Whether one of a header's comma-separated values, on any of its lines, is {@code token}, ignoring case. */
    static boolean hasToken(Enumeration<String> lines, String token) {
        while (lines != null && lines.hasMoreElements()) {
            for (String part : lines.nextElement().split(",")) {
                if (part.trim().toLowerCase(Locale.ROOT).equals(token)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** RFC 6455 §4.1: the key is a randomly selected 16-byte value, base64-encoded. */
    static boolean isNonce(String key) {
        try {
            return Base64.getDecoder().decode(key).length == 16;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
