package org.zrm.changesource.endpoint.internal;

import jakarta.servlet.Servlet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.config.NodeIdentity;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * The endpoint's DS component. Its configuration is optional: without one (a framework set up
 * without the shipped files) it is active and off, rather than an unsatisfied component that
 * readiness would report. The shipped
 * {@code conf/org.zrm.changesource.endpoint.cfg} sets {@code apiKey} from
 * {@code ZRM_CUSTOM_ENDPOINT_API_KEY}, and only a non-empty key registers the servlet at
 * {@value #PATTERN}. Without one the endpoint is off: no servlet, and {@code /status} says so.
 * Activation does no I/O: it registers a servlet and starts one timer thread for pings.
 */
@Component(service = {StatusContributor.class, MetricsContributor.class}, immediate = true,
        configurationPid = {NodeIdentity.PID, EndpointComponent.PID}, configurationPolicy = ConfigurationPolicy.OPTIONAL)
public final class EndpointComponent implements StatusContributor, MetricsContributor {

    static final String PID = "org.zrm.changesource.endpoint";
    static final String PATTERN = "/changes/v0/stream";

    private static final Logger LOG = LoggerFactory.getLogger(EndpointComponent.class);

    private final Endpoint endpoint; // null when off
    private final ScheduledThreadPoolExecutor scheduler;
    private final ServiceRegistration<Servlet> registration;
    private volatile ChangeStreamer pendingStreamer;

    @Activate
    public EndpointComponent(BundleContext context, EndpointConfig c) {
        if (c.apiKey().isEmpty()) {
            endpoint = null;
            scheduler = null;
            registration = null;
            LOG.info("custom change-source endpoint off (set ZRM_CUSTOM_ENDPOINT_API_KEY, or apiKey in {}.cfg, to"
                    + " serve {})", PID, PATTERN);
            return;
        }
        List<String> publications = org.zrm.config.Publications.split(c.app_publications());
        scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "zrm-custom-endpoint-pings");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        endpoint = new Endpoint(new EndpointRequest.Served(new ApiKey(c.apiKey()), c.app_id(), c.shard_num(),
                publications), new Settings(Duration.ofMillis(c.pingIntervalMs()), c.maxQueuedChars(),
                c.maxIncomingChars()), scheduler, new ReplicaSnapshot(java.nio.file.Path.of(c.replica_file()),
                c.app_id() + "_" + c.shard_num() + ".mutations"));
        ChangeStreamer s = pendingStreamer;
        if (s != null) {
            endpoint.bind(s);
        }
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("osgi.http.whiteboard.servlet.pattern", PATTERN);
        props.put("osgi.http.whiteboard.servlet.name", "zrm-custom-change-source-endpoint");
        registration = context.registerService(Servlet.class, new StreamServlet(endpoint), props);
        LOG.info("custom change-source endpoint on {} for shard {}_{} (publications {}, replica {})", PATTERN,
                c.app_id(), c.shard_num(), publications, c.replica_file());
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindChangeStreamer(ChangeStreamer s) {
        pendingStreamer = s; // bind may precede the constructor's end
        Endpoint e = endpoint;
        if (e != null) {
            e.bind(s);
        }
    }

    void unbindChangeStreamer(ChangeStreamer s) {
        if (pendingStreamer == s) {
            pendingStreamer = null;
        }
        Endpoint e = endpoint;
        if (e != null) {
            e.unbind(s);
        }
    }

    @Deactivate
    void deactivate() {
        if (registration != null) {
            registration.unregister();
            endpoint.close();
            scheduler.shutdownNow();
            LOG.info("custom change-source endpoint stopped");
        }
    }


    @Override
    public String section() {
        return "changesource.endpoint";
    }

    @Override
    public Map<String, Object> status() {
        if (endpoint == null) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("enabled", false);
            return m;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", true);
        m.put("path", PATTERN);
        m.put("changeStreamer", endpoint.streamer() != null);
        m.putAll(endpoint.stats().status());
        return m;
    }

    @Override
    public void collect(MetricsSink sink) {
        if (endpoint != null) {
            endpoint.stats().collect(sink);
        }
    }
}
