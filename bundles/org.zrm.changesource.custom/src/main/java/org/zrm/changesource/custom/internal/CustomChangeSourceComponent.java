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
 */
@Component(service = {ChangeSource.class, StatusContributor.class},
        configurationPid = {NodeIdentity.PID, "org.zrm.changesource.custom"},
        configurationPolicy = ConfigurationPolicy.REQUIRE, property = ChangeSource.TYPE + "=custom")
public final class CustomChangeSourceComponent implements ChangeSource, StatusContributor {

    private static final Logger LOG = LoggerFactory.getLogger(CustomChangeSourceComponent.class);
    private final CustomChangeSource source;

    @Activate
    public CustomChangeSourceComponent(CustomChangeSourceConfig c) {
        EndpointUrl endpoint = new EndpointUrl(c.upstream_db());
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("appID", c.app_id());
        this.source = new CustomChangeSource(endpoint, c.app_id(), c.shard_num(), publications(c.app_publications()),
                Path.of(c.replica_file()), context, new StreamSettings(Duration.ofMillis(c.connectTimeoutMs()),
                        Duration.ofMillis(c.pingIntervalMs()), c.maxMessageChars(), c.bufferMessages(), c.bufferChars()));
        LOG.info("custom change source configured: upstream={} shard={}_{} publications={} replica={}",
                endpoint.displayName(), c.app_id(), c.shard_num(), publications(c.app_publications()), c.replica_file());
    }

    /** Comma-separated values, as zero-cache's array options; blanks dropped. */
    static List<String> publications(String[] values) {
        List<String> out = new ArrayList<>();
        for (String v : values) {
            for (String p : v.split(",")) {
                if (!p.isBlank()) {
                    out.add(p.trim());
                }
            }
        }
        return out;
    }

    @Deactivate
    void deactivate() {
        source.stop();
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        return source.initialize(resetReplica);
    }

    @Override
    public OptionalLong startLagReporter() {
        return source.startLagReporter();
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        return source.startStream(afterWatermark, backfillRequests);
    }

    @Override
    public void stop() {
        source.stop();
    }

    @Override
    public String section() {
        return "changesource.custom";
    }

    @Override
    public Map<String, Object> status() {
        return source.status();
    }
}
