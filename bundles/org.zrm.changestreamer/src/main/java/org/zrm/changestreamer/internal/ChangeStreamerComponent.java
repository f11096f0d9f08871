package org.zrm.changestreamer.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * Registers the {@link ChangeStreamer} (PID {@value #PID}) over the {@link StorerFactory} and the
 * change source whose {@code zrm.changesource.type} equals {@code changesource.type}. Activation
 * starts the stream loop thread and returns; the loop initialises the source and takes over the
 * change log on its own thread.
 *
 * <p>Change sources are tracked dynamically and greedily (any number may be registered; the one of
 * the configured type is used), so a replaced source bundle is picked up without restarting the
 * streamer: removing the active source ends its stream (an open transaction is rolled back), and
 * the loop initialises the replacement and resumes from the change log's last stored watermark.
 *
 * <p>Invalid configuration values fail activation with an {@link IllegalArgumentException} naming
 * the property; nothing is started then.
 */
@Component(service = {ChangeStreamer.class, StatusContributor.class, MetricsContributor.class, BackupControl.class},
        configurationPid = ChangeStreamerComponent.PID, configurationPolicy = ConfigurationPolicy.REQUIRE, immediate = true)
@Designate(ocd = ChangeStreamerConfig.class)
public final class ChangeStreamerComponent implements ChangeStreamer, StatusContributor, MetricsContributor,
        BackupControl {

    static final String PID = "org.zrm.changestreamer";
    private static final Logger LOG = LoggerFactory.getLogger(ChangeStreamerComponent.class);

    private final String sourceType;
    private final SourceSlot sources = new SourceSlot();
    private final ChangeStreamerService service;
    private final BackupCoordinator backup;
    private final ThreadPoolExecutor statusSender;
    private final ThreadPoolExecutor coordinatorThread;
    private final TerminalStop terminalStop;
    private final RestorerSlot restorers;

    /**
     * @throws IllegalArgumentException if a configuration value is invalid (the message names the
     *     property); activation fails and nothing is started
     */
    @Activate
    public ChangeStreamerComponent(ChangeStreamerConfig config, @Reference StorerFactory storerFactory,
            BundleContext context) {
        StreamerSettings settings;
        try {
            settings = settings(config, httpPort(context));
        } catch (IllegalArgumentException e) {
            LOG.error("change-streamer: invalid configuration of {}: {}", PID, e.getMessage());
            throw new IllegalArgumentException("invalid configuration of " + PID + ": " + e.getMessage(), e);
        }
        this.sourceType = config.changesource_type().strip();
        Reservations reservations = new Reservations();
        this.service = new ChangeStreamerService(settings, storerFactory, sources, null, reservations);
        // Snapshot statuses read the change log: off the HTTP thread, one at a time. Bound: 64
        // waiting reservations; beyond that a reservation fails at once and its client retries.
        this.statusSender = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(64), r -> {
            Thread t = new Thread(r, "zrm-backup-snapshot-status");
            t.setDaemon(true);
            return t;
        });
        statusSender.allowCoreThreadTimeOut(true);
        // The coordinator's own thread: swaps, monitor starts and stops, and the fatal stop wait
        // there instead of in ConfigAdmin's or DS's callback threads. Bound: requests coalesce, so
        // at most one reconcile, one fatal stop and the close are ever queued.
        this.coordinatorThread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(8), r -> {
            Thread t = new Thread(r, "zrm-backup-coordinator");
            t.setDaemon(true);
            return t;
        });
        FrameworkStop stopRuntime = new FrameworkStop(context);
        this.backup = new BackupCoordinator(service, reservations, Clock.systemUTC(), statusSender,
                coordinatorThread, stopRuntime);
        service.initialized().thenRun(backup::streamerInitialized);
        BackupCoordinator coordinator = backup;
        this.terminalStop = new TerminalStop(config.exitOnTerminalStop(), stopRuntime, () -> !coordinator.healthy(),
                Clock.systemUTC());
        service.terminated().thenAccept(terminalStop::streamerTerminated);
        String backupURL = config.litestream_backupURL() == null ? "" : config.litestream_backupURL().strip();
        this.restorers = new RestorerSlot(!backupURL.isEmpty(), Duration.ofMillis(Math.max(0,
                config.restore_awaitRestorerMs())));
        service.restoreStep(restorers);
        LOG.info("change-streamer: task {} for {}_{} (source type {}, address {}, autoReset {})", settings.taskID(),
                config.app_id(), config.shard_num(), sourceType, settings.ownerAddress(), settings.autoReset());
        service.start();
    }

    /**
     * Converts and validates the configuration.
     *
     * @throws IllegalArgumentException naming the property whose value is invalid
     */
    /** The runtime's HTTP port, where the WebSocket endpoints listen (the launcher sets it). */
    private static int httpPort(BundleContext context) {
        String port = context.getProperty(HTTP_PORT_PROPERTY);
        try {
            return port == null || port.isBlank() ? DEFAULT_PORT : Integer.parseInt(port.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(HTTP_PORT_PROPERTY + " is not a port number: " + port, e);
        }
    }

    static final String HTTP_PORT_PROPERTY = "org.osgi.service.http.port";
    static final int DEFAULT_PORT = 4849;

    static StreamerSettings settings(ChangeStreamerConfig c) {
        return settings(c, DEFAULT_PORT);
    }

    /**
     * @param port the change-streamer port, for the default owner address {@code <hostname>:<port>}
     *     (upstream publishes its own host and change-streamer port)
     */
    static StreamerSettings settings(ChangeStreamerConfig c, int port) {
        if (c.changesource_type() == null || c.changesource_type().isBlank()) {
            throw new IllegalArgumentException("changesource.type must not be empty");
        }
        String task = c.task_id() == null || c.task_id().isBlank() ? UUID.randomUUID().toString() : c.task_id().strip();
        String address = c.changeStreamer_address() == null || c.changeStreamer_address().isBlank()
                ? hostname() + ":" + port : c.changeStreamer_address().strip();
        String protocol = c.changeStreamer_protocol() == null ? "ws" : c.changeStreamer_protocol().strip();
        if (!protocol.equals("ws") && !protocol.equals("wss")) {
            throw new IllegalArgumentException("changeStreamer.protocol must be ws or wss: " + protocol);
        }
        String ownerAddress = protocol.equals("ws") ? address : protocol + "://" + address;
        if (c.changeStreamer_subscriberMaxBufferedBytes() < StreamerSettings.MIN_SUBSCRIBER_MAX_BUFFERED_BYTES) {
            throw new IllegalArgumentException("changeStreamer.subscriberMaxBufferedBytes must be at least "
                    + StreamerSettings.MIN_SUBSCRIBER_MAX_BUFFERED_BYTES + ": " + c.changeStreamer_subscriberMaxBufferedBytes());
        }
        if (c.changeStreamer_cleanupDelayMs() < 1) {
            throw new IllegalArgumentException("changeStreamer.cleanupDelayMs must be at least 1: "
                    + c.changeStreamer_cleanupDelayMs());
        }
        if (Double.isNaN(c.changeStreamer_flowControlConsensusPaddingSeconds())
                || Double.isInfinite(c.changeStreamer_flowControlConsensusPaddingSeconds())) {
            throw new IllegalArgumentException("changeStreamer.flowControlConsensusPaddingSeconds must be a finite number: "
                    + c.changeStreamer_flowControlConsensusPaddingSeconds());
        }
        return StreamerSettings.defaults(task, ownerAddress)
                .withAutoReset(c.autoReset())
                .withCatchupThreads(c.changeStreamer_catchupThreads())
                .withStartupDelay(Duration.ofMillis(c.changeStreamer_startupDelayMs()))
                .withSubscriberMaxBufferedBytes(c.changeStreamer_subscriberMaxBufferedBytes())
                .withFlowControl(c.changeStreamer_flowControlConsensusPaddingSeconds(),
                        StreamerSettings.FLUSH_BYTES_THRESHOLD, Duration.ofSeconds(1))
                .withFlowControlWindow(c.changeStreamer_flowControlWindow())
                .withCleanupDelay(Duration.ofMillis(c.changeStreamer_cleanupDelayMs()));
    }

    private static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addSource(ChangeSource source, Map<String, Object> props) {
        if (sourceType.equals(props.get(ChangeSource.TYPE))) {
            ChangeSource previous = sources.set(source);
            if (previous != null && previous != source) {
                // Two sources of one type is a deployment mistake; the newest wins, the old stream
                // ends at its next failure or removal.
                LOG.warn("change-streamer: a second change source of type {} was registered; using the newest", sourceType);
            }
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addRestorer(org.zrm.backup.ReplicaRestorer restorer) {
        restorers.set(restorer);
    }

    void removeRestorer(org.zrm.backup.ReplicaRestorer restorer) {
        restorers.clear(restorer);
    }

    void removeSource(ChangeSource source) {
        sources.clear(source);
        service.sourceRemoved(source);
    }

    ChangeStreamerService service() {
        return service;
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        terminalStop.orderlyStop();
        restorers.cancel();
        backup.close(Duration.ofSeconds(30));
        coordinatorThread.shutdown();
        service.stop(Duration.ofSeconds(30));
        statusSender.shutdownNow();
    }

    @Override
    public BackupCoordinator coordinator() {
        return backup;
    }

    @Override
    public Subscription subscribe(SubscriberContext context) {
        return service.subscribe(context);
    }

    @Override
    public ChangeLogState getChangeLogState() throws ChangeLogException {
        return service.getChangeLogState();
    }

    @Override
    public void reserveSnapshot(String taskID, SnapshotReservation reservation) throws SnapshotUnavailableException {
        backup.reserve(taskID, reservation);
    }

    @Override
    public void endReservation(String taskID) {
        backup.endReservation(taskID);
    }

    @Override
    public String section() {
        return "changestreamer";
    }

    @Override
    public Map<String, Object> status() {
        Map<String, Object> m = new java.util.LinkedHashMap<>(service.status());
        // The readiness convention of /readyz: streaming, which implies an initialized replica and log.
        m.put("ready", service.state() == ChangeStreamerService.State.STREAMING);
        m.put("terminalStop", terminalStop.status());
        return m;
    }

    @Override
    public boolean healthy() {
        return terminalStop.healthy();
    }

    @Override
    public void collect(MetricsSink sink) {
        StreamerMetrics.collect(service.snapshot(), sink);
        terminalStop.collect(sink);
    }

    /** The current source of the configured type; the stream loop waits on it (signal, no polling). */
    static final class SourceSlot implements ChangeStreamerService.SourceProvider {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private ChangeSource current;

        /** @return the source it replaced, or {@code null} */
        ChangeSource set(ChangeSource s) {
            lock.lock();
            try {
                ChangeSource previous = current;
                current = s;
                changed.signalAll();
                return previous;
            } finally {
                lock.unlock();
            }
        }

        void clear(ChangeSource s) {
            lock.lock();
            try {
                if (current == s) {
                    current = null;
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public Optional<ChangeSource> await(Duration timeout) throws InterruptedException {
            lock.lock();
            try {
                long nanos = timeout.toNanos();
                while (current == null && nanos > 0) {
                    nanos = changed.awaitNanos(nanos);
                }
                return Optional.ofNullable(current);
            } finally {
                lock.unlock();
            }
        }
    }

}
