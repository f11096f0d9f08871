package org.zrm.replicator.internal;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.secret.Secrets;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * Runs the backup {@link Replicator} for PID {@code org.zrm.replicator}. With an empty
 * {@code changeStreamer.uri} it subscribes through the {@link ChangeStreamer} service (optional
 * and greedy, so the component restarts when the service appears); otherwise over a WebSocket.
 */
@Component(service = {StatusContributor.class, MetricsContributor.class}, configurationPid = "org.zrm.replicator",
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = ReplicatorConfig.class)
public final class ReplicatorComponent implements StatusContributor, MetricsContributor {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicatorComponent.class);

    private final Replicator replicator;
    private final String mode;

    @Activate
    public ReplicatorComponent(ReplicatorConfig config,
            @Reference(name = "changeStreamer", cardinality = ReferenceCardinality.OPTIONAL,
                    policyOption = ReferencePolicyOption.GREEDY)
            ChangeStreamer streamer) {
        ProtocolCodec codec = new ProtocolCodec();
        String uri = config.changeStreamer_uri() == null ? "" : config.changeStreamer_uri().trim();
        ChangeStreamClient client;
        if (uri.isEmpty()) {
            mode = "in-process";
            client = streamer == null ? null : new InProcessChangeStreamClient(streamer);
        } else {
            mode = "remote";
            client = new WebSocketChangeStreamClient(URI.create(uri), codec,
                    Duration.ofMillis(config.changeStreamer_connectTimeoutMs()),
                    WebSocketChangeStreamClient.DEFAULT_LIVENESS_TIMEOUT, config.changeStreamer_maxMessageBytes());
        }
        String taskId = config.task_id() == null || config.task_id().isBlank()
                ? UUID.randomUUID().toString().substring(0, 8) : config.task_id().trim();
        String subscriberId = taskId + "/backup-replicator-" + ProcessHandle.current().pid();
        ReplicaFile replica = new ReplicaFile(Path.of(config.replica_file()), walAutocheckpoint(config));
        if (client == null) {
            replicator = null;
            LOG.info("replicator: waiting for the in-process ChangeStreamer service (replica {})", replica.path());
            return;
        }
        replicator = new Replicator(replica, client, codec, taskId, subscriberId, config.replicator_retryInitialMs(),
                config.replicator_retryMaxMs());
        LOG.info("replicator: starting backup replicator task={} replica={} changeStreamer={}", taskId, replica.path(),
                Secrets.maskUrls(client.target()));
        replicator.start();
    }

    /** -1 = litestream's rule: with a backup URL litestream owns checkpoints (0), else SQLite's 1000. */
    static int walAutocheckpoint(ReplicatorConfig config) {
        if (config.replica_walAutocheckpoint() >= 0) {
            return config.replica_walAutocheckpoint();
        }
        String url = config.litestream_backupURL();
        return url == null || url.isBlank() ? 1000 : 0;
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        if (replicator != null) {
            replicator.stop();
        }
    }

    @Override
    public String section() {
        return "replicator";
    }

    @Override
    public Map<String, Object> status() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("mode", "backup");
        s.put("changeStreamer", mode);
        if (replicator == null) {
            s.put("phase", "WAITING_FOR_CHANGE_STREAMER");
            s.put("connected", false);
            s.put("ready", false);
            return s;
        }
        ReplicatorStatus st = replicator.status();
        // The readiness convention of /readyz: the replica file is initialized and kept up to date.
        s.put("ready", st.phase() == ReplicatorStatus.Phase.REPLICATING && st.replicaVersion() != null);
        if (!"in-process".equals(mode)) {
            s.put("uri", Secrets.maskUrls(replicator.target()));
        }
        s.put("phase", st.phase().name());
        s.put("connected", st.connected());
        s.put("replicaVersion", st.replicaVersion());
        s.put("stateVersion", st.stateVersion());
        s.put("transactionsApplied", st.transactionsApplied());
        s.put("rollbacks", st.rollbacks());
        s.put("reconnects", st.reconnects());
        s.put("lastCommitLagMs", st.lastCommitLagMs() < 0 ? null : st.lastCommitLagMs());
        s.put("lastError", st.lastError());
        return s;
    }

    @Override
    public void collect(MetricsSink sink) {
        if (replicator == null) {
            return;
        }
        ReplicatorMetrics.collect(replicator.status(), sink);
    }
}
