package org.zrm.changestreamer.http.internal;

import jakarta.servlet.Servlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.servlet.whiteboard.propertytypes.HttpWhiteboardServletPattern;
import org.zrm.status.MetricsContributor;

/** {@code GET /metrics}: every registered {@link MetricsContributor} in the Prometheus text format. */
@Component(service = Servlet.class)
@HttpWhiteboardServletPattern("/metrics")
public final class MetricsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient PrometheusRenderer renderer = new PrometheusRenderer();

    /** Whiteboard of metric sources; replaced wholesale by SCR (field strategy), never mutated. */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private transient volatile List<MetricsContributor> contributors = List.of();

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = renderer.render(contributors).getBytes(StandardCharsets.UTF_8);
        response.setStatus(HttpServletResponse.SC_OK);
        response.setContentType(PrometheusRenderer.CONTENT_TYPE);
        response.setHeader("Cache-Control", "no-store");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
