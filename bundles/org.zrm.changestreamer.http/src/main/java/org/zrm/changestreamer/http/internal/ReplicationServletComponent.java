package org.zrm.changestreamer.http.internal;

import jakarta.servlet.Servlet;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.servlet.whiteboard.propertytypes.HttpWhiteboardServletPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;

/**
 * Publishes {@code /replication/v{1..6}/changes} and {@code /replication/v{1..6}/snapshot} on the
 * HTTP Whiteboard, plus the endpoints' metrics.
 *
 * <p>The {@link ChangeStreamer} reference is dynamic and greedy, so swapping the streamer bundle
 * does not unregister the servlet: the replacement serves new connections and the departing
 * streamer's connections are closed with 1001, from which clients reconnect. Without any streamer
 * the component is deactivated and its connections are closed the same way. A configuration
 * change re-creates the component (all connections close with 1001).
 */
@Component(service = {Servlet.class, MetricsContributor.class}, configurationPid = ReplicationServletComponent.PID)
@HttpWhiteboardServletPattern(ReplicationServletComponent.PATTERN)
@Designate(ocd = ChangeStreamerHttpConfig.class)
public final class ReplicationServletComponent extends ReplicationServlet implements MetricsContributor {

    static final String PID = "org.zrm.changestreamer.http";
    static final String PATTERN = "/replication/*";

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServletComponent.class);

    private final transient HttpMetrics metrics;

    @Activate
    public ReplicationServletComponent(ChangeStreamerHttpConfig config) {
        this(Settings.of(config), new HttpMetrics(), AddressAllowList.parse(config.allow()));
    }

    private ReplicationServletComponent(Settings settings, HttpMetrics metrics, AddressAllowList allow) {
        super(new ReplicationEndpoint(settings, metrics), allow);
        this.metrics = metrics;
        LOG.info("change-streamer endpoints accept connections from {}", allow);
        LOG.info("change-streamer endpoints on {} (ping every {} ms, at most {} unacknowledged and {} queued chars per connection)",
                PATTERN, settings.pingInterval().toMillis(), settings.maxUnackedChars(), settings.maxQueuedChars());
    }

    @Reference(policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindChangeStreamer(ChangeStreamer streamer) {
        endpoint().bind(streamer);
    }

    void unbindChangeStreamer(ChangeStreamer streamer) {
        endpoint().unbind(streamer);
    }

    @Deactivate
    void deactivate() {
        endpoint().close();
        LOG.info("change-streamer endpoints stopped");
    }

    @Override
    public void collect(MetricsSink sink) {
        metrics.collect(sink);
    }
}
