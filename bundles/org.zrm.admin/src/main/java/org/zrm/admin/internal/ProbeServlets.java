package org.zrm.admin.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import jakarta.servlet.Servlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.servlet.whiteboard.propertytypes.HttpWhiteboardServletPattern;

/** The orchestrator probes; both answer with the JSON body of {@code /status}. */
final class ProbeServlets {

    private ProbeServlets() {
    }

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @SuppressWarnings("unchecked")
    static void write(HttpServletResponse response, int code, RuntimeStatus status, List<String> notReady)
            throws IOException {
        Map<String, Object> body = JSON.convertValue(status, LinkedHashMap.class);
        body.put("ready", notReady.isEmpty());
        body.put("notReady", notReady);
        byte[] bytes = JSON.writeValueAsBytes(body);
        response.setStatus(code);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-store");
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    /**
     * {@code GET /healthz}: liveness. 200 whenever the runtime answers, healthy or not: a node
     * that stopped for good exits by itself ({@code exitOnTerminalStop}), and one kept up on
     * purpose must not be restarted by its liveness probe. {@code healthy} in the body says more.
     */
    @Component(service = Servlet.class)
    @HttpWhiteboardServletPattern("/healthz")
    public static final class Healthz extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient StatusSource source;

        @Activate
        public Healthz(@Reference StatusSource source) {
            this.source = source;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            RuntimeStatus status = source.status();
            write(response, HttpServletResponse.SC_OK, status, Readiness.notReady(status));
        }
    }

    /** {@code GET /readyz}: 200 when {@link Readiness} finds nothing missing, else 503 with the reasons. */
    @Component(service = Servlet.class)
    @HttpWhiteboardServletPattern("/readyz")
    public static final class Readyz extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient StatusSource source;

        @Activate
        public Readyz(@Reference StatusSource source) {
            this.source = source;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            RuntimeStatus status = source.status();
            List<String> notReady = Readiness.notReady(status);
            write(response, notReady.isEmpty() ? HttpServletResponse.SC_OK : HttpServletResponse.SC_SERVICE_UNAVAILABLE,
                    status, notReady);
        }
    }
}
