package org.zrm.changesource.custom.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.config.NodeIdentity;
import org.zrm.protocol.BackfillRequest;
import org.zrm.status.StatusContributor;

/**
 * Registers the custom-protocol {@link ChangeSource} ({@code zrm.changesource.type=custom}).
 * Activation only validates the configuration; nothing connects until the change streamer calls
 * {@link #initialize(boolean)} on its own thread.
 *
 * <p>The configuration is optional and an unusable {@code upstream.db} does not fail activation:
 * the shipped configuration passes {@code ZERO_UPSTREAM_DB} to every source, which is a Postgres
 * URL whenever the {@code pg} source is the one selected, and a component that failed to activate
 * would make the runtime unhealthy for a source nobody uses. The problem is logged, shown in
 * {@code /status}, and reported by {@link #initialize(boolean)} if this source is selected.
 */
@Component(service = {ChangeSource.class, StatusContributor.class},
        configurationPid = {NodeIdentity.PID, "org.zrm.changesource.custom"},
        configurationPolicy = ConfigurationPolicy.OPTIONAL, property = ChangeSource.TYPE + "=custom")
public final class CustomChangeSourceComponent implements ChangeSource, StatusContributor {

    private static final Logger LOG = LoggerFactory.getLogger(CustomChangeSourceComponent.class);
    private final CustomChangeSource source; // null when the configuration is unusable
    private final String configError; // why, or null

    @Activate
    public CustomChangeSourceComponent(CustomChangeSourceConfig c) {
        EndpointUrl endpoint;
        try {
            endpoint = new EndpointUrl(c.upstream_db());
        } catch (IllegalArgumentException e) {
            this.source = null;
            this.configError = "custom change source not usable: " + e.getMessage();
            LOG.info("{} (this matters only if changeSource.target selects zrm.changesource.type=custom)", configError);
            return;
        }
        this.configError = null;
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("appID", c.app_id());
        this.source = new CustomChangeSource(endpoint, c.app_id(), c.shard_num(), org.zrm.config.Publications.split(c.app_publications()),
                Path.of(c.replica_file()), context, new StreamSettings(Duration.ofMillis(c.connectTimeoutMs()),
                        Duration.ofMillis(c.pingIntervalMs()), c.maxMessageChars(), c.bufferMessages(), c.bufferChars()));
        LOG.info("custom change source configured: upstream={} shard={}_{} publications={} replica={}",
                endpoint.displayName(), c.app_id(), c.shard_num(), org.zrm.config.Publications.split(c.app_publications()), c.replica_file());
    }

    private CustomChangeSource source() throws ChangeSourceAbortedException {
        if (source == null) {
            // Retrying cannot help until the configuration changes, which re-activates this component.
            throw new ChangeSourceAbortedException(configError);
        }
        return source;
    }


    @Deactivate
    void deactivate() {
        stop();
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        return source().initialize(resetReplica);
    }

    @Override
    public OptionalLong startLagReporter() {
        return OptionalLong.empty(); // custom sources report no lag
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        return source().startStream(afterWatermark, backfillRequests);
    }

    @Override
    public void stop() {
        if (source != null) {
            source.stop();
        }
    }

    @Override
    public String section() {
        return "changesource.custom";
    }

    @Override
    public Map<String, Object> status() {
        if (source == null) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("error", configError);
            return m;
        }
        return source.status();
    }
}
