package org.zrm.replicator.internal;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.config.NodeIdentity;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.secret.Secrets;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * Runs the backup {@link Replicator} for PID {@value #PID} over the {@link ReplicatorUpstream}
 * that {@code upstream.target} selects: {@link InProcessUpstream} (this runtime's change
 * streamer) or {@link RemoteUpstream} (a WebSocket). The reference is static and mandatory: until
 * the selected upstream is available the component is unsatisfied, which {@code /status} reports
 * with the filter; a replaced upstream restarts the replicator, which resumes from its replica.
 */
@Component(service = {StatusContributor.class, MetricsContributor.class},
        configurationPid = {NodeIdentity.PID, ReplicatorComponent.PID}, configurationPolicy = ConfigurationPolicy.REQUIRE)
public final class ReplicatorComponent implements StatusContributor, MetricsContributor {

    static final String PID = "org.zrm.replicator";
    /** The upstream when the configuration sets no {@code upstream.target}: this runtime's streamer. */
    static final String DEFAULT_UPSTREAM_TARGET = "(" + ReplicatorUpstream.KIND + "=" + ReplicatorUpstream.IN_PROCESS + ")";
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatorComponent.class);

    private final Replicator replicator;
    private final String mode;

    @Activate
    public ReplicatorComponent(ReplicatorConfig config, @Reference(name = "upstream", target = DEFAULT_UPSTREAM_TARGET)
            ReplicatorUpstream upstream) {
        ProtocolCodec codec = new ProtocolCodec();
        this.mode = upstream.kind();
        ChangeStreamClient client = upstream.client(codec);
        String taskId = config.task_id() == null || config.task_id().isBlank()
                ? UUID.randomUUID().toString().substring(0, 8) : config.task_id().trim();
        String subscriberId = taskId + "/backup-replicator-" + ProcessHandle.current().pid();
        ReplicaFile replica = new ReplicaFile(Path.of(config.replica_file()), walAutocheckpoint(config));
        replicator = new Replicator(replica, client, codec, taskId, subscriberId, config.replicator_retryInitialMs(),
                config.replicator_retryMaxMs());
        LOG.info("replicator: starting backup replicator task={} replica={} changeStreamer={} ({})", taskId,
                replica.path(), Secrets.maskUrls(client.target()), mode);
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
        replicator.stop();
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
        ReplicatorStatus st = replicator.status();
        // The readiness convention of /readyz: the replica file is initialized and kept up to date.
        s.put("ready", st.phase() == ReplicatorStatus.Phase.REPLICATING && st.replicaVersion() != null);
        if (ReplicatorUpstream.REMOTE.equals(mode)) {
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

    /**
     * Unhealthy while the change streamer refuses this replica (STOPPED_ON_ERROR): the replica is
     * not kept up to date until a re-sync replaces it, which autoReset does in process; with
     * autoReset off the streamer's reset-required terminal stop ends the node. Other failures are
     * retried with back-off and show as {@code lastError}.
     */
    @Override
    public boolean healthy() {
        return replicator.status().phase() != ReplicatorStatus.Phase.STOPPED_ON_ERROR;
    }

    @Override
    public void collect(MetricsSink sink) {
        ReplicatorMetrics.collect(replicator.status(), sink);
    }
}
