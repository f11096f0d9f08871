package org.zrm.changesource.custom.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceAbortedException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.replica.sync.StreamFedInitialSync;

/**
 * Client of Zero's custom change-source protocol (upstream {@code CustomChangeSource} and
 * {@code initializeCustomChangeSource}): a WebSocket endpoint streams change-source messages, the
 * first transaction of a fresh stream is the initial sync ({@link StreamFedInitialSync}), and later
 * streams resume after the last stored watermark.
 *
 * <p>Reconnecting is the change streamer's job: every failure here is a retryable
 * {@link ChangeSourceException} (except those that retrying cannot fix), and the streamer calls
 * {@link #startStream} again with back-off and its last stored watermark. A {@code reset-required}
 * control message arrives in-band; the streamer then resets, and {@link #initialize(boolean)} with
 * {@code true} discards the replica and syncs again.
 */
final class CustomChangeSource implements ChangeSource {

    private static final Logger LOG = LoggerFactory.getLogger(CustomChangeSource.class);

    /** Upstream's text. */
    static final String BACKFILL_UNSUPPORTED = "backfill is yet not supported for custom change sources";

    private final EndpointUrl endpoint;
    private final String appId;
    private final int shardNum;
    private final List<String> publications;
    private final StreamSettings settings;
    private final StreamFedInitialSync initialSync;
    private final ProtocolCodec codec = new ProtocolCodec();
    private final HttpClient http;
    private final ScheduledExecutorService timer;
    private final AtomicReference<CustomChangeStream> current = new AtomicReference<>();
    private volatile SubscriptionState state;

    CustomChangeSource(EndpointUrl endpoint, String appId, int shardNum, List<String> publications, Path replicaFile,
            Map<String, Object> serverContext, StreamSettings settings) {
        this.endpoint = endpoint;
        this.appId = appId;
        this.shardNum = shardNum;
        this.publications = List.copyOf(publications);
        this.settings = settings;
        this.initialSync = new StreamFedInitialSync(endpoint.displayName(), replicaFile, appId, shardNum,
                this.publications, serverContext);
        this.http = HttpClient.newBuilder().connectTimeout(settings.connectTimeout()).build();
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = Executors.defaultThreadFactory().newThread(r);
            th.setName("zrm-custom-source-ping");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    String source() {
        return endpoint.displayName();
    }

    /** The state of the replica after {@link #initialize}, or null before. */
    SubscriptionState subscriptionState() {
        return state;
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        SubscriptionState s = initialSync.initialize(resetReplica, () -> open(null, "", publications));
        LOG.info("custom change source {}: replica at replicaVersion {}, watermark {}", source(), s.replicaVersion(),
                s.watermark());
        state = s;
        return s;
    }

    @Override
    public OptionalLong startLagReporter() {
        return OptionalLong.empty(); // as upstream: custom sources report no lag
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException, InterruptedException {
        if (!backfillRequests.isEmpty()) {
            // Retrying cannot help, so the pipeline stops with upstream's text.
            throw new ChangeSourceAbortedException(BACKFILL_UNSUPPORTED);
        }
        SubscriptionState s = state;
        if (s == null) {
            throw new ChangeSourceException("custom change source " + source() + ": startStream before initialize");
        }
        // As upstream: a resumed stream names the replica's publications (sorted), the initial sync
        // the configured ones in their configured order.
        return open(afterWatermark, s.replicaVersion(), s.publications());
    }

    private CustomChangeStream open(String afterWatermark, String replicaVersion, List<String> pubs)
            throws ChangeSourceException, InterruptedException {
        URI uri = endpoint.streamUri(appId, shardNum, pubs, afterWatermark, replicaVersion);
        CustomChangeStream stream = CustomChangeStream.open(http, uri, source(), codec, settings, timer, afterWatermark);
        CustomChangeStream previous = current.getAndSet(stream);
        if (previous != null) {
            previous.close();
        }
        LOG.info("custom change source {}: streaming {}", source(),
                afterWatermark == null ? "the initial sync" : "after " + afterWatermark);
        return stream;
    }

    @Override
    public void stop() {
        CustomChangeStream s = current.getAndSet(null);
        if (s != null) {
            s.close();
        }
        timer.shutdownNow();
    }

    Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("upstream", source());
        m.put("shard", appId + "_" + shardNum);
        m.put("publications", publications);
        SubscriptionState s = state;
        m.put("replicaVersion", s == null ? null : s.replicaVersion());
        return m;
    }
}
