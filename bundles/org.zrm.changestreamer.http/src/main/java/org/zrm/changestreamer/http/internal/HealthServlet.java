package org.zrm.changestreamer.http.internal;

import jakarta.servlet.Servlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.whiteboard.propertytypes.HttpWhiteboardServletPattern;

/**
 * Upstream's health checks: {@code GET /} and {@code GET /keepalive} answer {@code OK}, whatever
 * the query string. {@code "/"} is the servlet default mapping, so every other unmatched path
 * lands here too and gets the 404 it would get anyway.
 *
 * <p>A browser asking for {@code /} (its {@code Accept} header names {@code text/html}) is sent to
 * the status page at {@value #STATUS_PAGE} instead: health checkers ({@code curl}, load balancers,
 * zero-cache) do not ask for HTML, so they still get upstream's {@code OK}.
 *
 * <p>Upstream's {@code /keepalive} also feeds a drain monitor ({@code ZERO_KEEPALIVE_TIMEOUT_MS},
 * used on ECS); that is not ported, the endpoint only answers.
 */
@Component(service = Servlet.class)
@HttpWhiteboardServletPattern({"/", "/keepalive"})
public final class HealthServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final byte[] OK = "OK".getBytes(StandardCharsets.UTF_8);
    /** The admin bundle's live status page. */
    static final String STATUS_PAGE = "/ui/";

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        if (!path.isEmpty() && !path.equals("/") && !path.equals("/keepalive")) {
            response.sendError(HttpServletResponse.SC_NOT_FOUND);
            return;
        }
        String accept = request.getHeader("Accept");
        if (!path.equals("/keepalive") && accept != null && accept.contains("text/html")) {
            response.setStatus(HttpServletResponse.SC_FOUND);
            response.setHeader("Location", STATUS_PAGE);
            response.setHeader("Cache-Control", "no-store");
            return;
        }
        response.setStatus(HttpServletResponse.SC_OK);
        response.setContentType("text/plain");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-store");
        response.setContentLength(OK.length);
        response.getOutputStream().write(OK);
    }
}
