package org.zrm.admin.internal;

import jakarta.servlet.Servlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.whiteboard.propertytypes.HttpWhiteboardServletPattern;

/**
 * The live status page: {@code GET /ui/} serves {@code ui/index.html}, {@code GET /ui/<file>} its
 * script and style sheet, all static files of this bundle. A browser opening {@code /} on the
 * same port is redirected here by the change streamer's health servlet. The page reads only {@code /status}
 * and {@code /metrics}, so it shows nothing an operator could not already fetch, and needs no
 * build step at run time.
 *
 * <p>Answers 404 for every path below {@code /ui/} but the page and its files.
 */
@Component(service = Servlet.class)
@HttpWhiteboardServletPattern("/ui/*")
public final class StatusPageServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** The page's files: a fixed list, so no request path ever names a resource of its own. */
    private static final Map<String, String> FILES = Map.of(
            "/ui/", "text/html",
            "/ui/app.js", "text/javascript",
            "/ui/app.css", "text/css");

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getRequestURI();
        if (path.equals("/ui")) {
            response.sendRedirect("/ui/");
            return;
        }
        String type = FILES.get(path);
        if (type == null) {
            response.sendError(HttpServletResponse.SC_NOT_FOUND);
            return;
        }
        String resource = path.equals("/ui/") ? "ui/index.html" : path.substring(1);
        byte[] body;
        try (InputStream in = StatusPageServlet.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("the bundle lacks its resource " + resource);
            }
            body = in.readAllBytes();
        }
        response.setStatus(HttpServletResponse.SC_OK);
        response.setContentType(type);
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Content-Type-Options", "nosniff");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
