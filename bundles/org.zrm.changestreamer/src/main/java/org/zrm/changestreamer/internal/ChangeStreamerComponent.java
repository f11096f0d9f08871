package org.zrm.changestreamer.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
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
import org.zrm.backup.SnapshotReservation;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.ChangeLogState;
import org.zrm.changelog.StorerFactory;
import org.zrm.changesource.ChangeSource;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.changestreamer.Subscription;
import org.zrm.config.NodeIdentity;
import org.zrm.operator.ChangeStreamerOperations;
import org.zrm.operator.OperationException;
import org.zrm.operator.PurgePreview;
import org.zrm.status.MetricsContributor;
import org.zrm.status.MetricsSink;
import org.zrm.status.StatusContributor;

/**
 * Registers the {@link ChangeStreamer} (PID {@value #PID}) over the {@link StorerFactory} and the
 * change source that {@link ChangeSourceSelection} binds through {@code changeSource.target}.
 * Activation starts the stream loop thread and returns; the loop initialises the source and takes
 * over the change log on its own thread.
 *
 * <p>The selection is tracked dynamically, so a replaced source bundle is picked up without
 * restarting the streamer: removing the active source ends its stream (an open transaction is
 * rolled back), and the loop initialises the replacement and resumes from the change log's last
 * stored watermark. While no source matches, the loop waits; after the grace period it logs one
 * error naming the filter and the registered change-source types.
 *
 * <p>Invalid configuration values fail activation with an {@link IllegalArgumentException} naming
 * the property; nothing is started then.
 */
@Component(service = {ChangeStreamer.class, StatusContributor.class, MetricsContributor.class, BackupControl.class,
        ChangeStreamerOperations.class},
        configurationPid = {NodeIdentity.PID, ChangeStreamerComponent.PID},
        configurationPolicy = ConfigurationPolicy.REQUIRE, immediate = true)
public final class ChangeStreamerComponent implements ChangeStreamer, StatusContributor, MetricsContributor,
        BackupControl, ChangeStreamerOperations {

    static final String PID = "org.zrm.changestreamer";
    /** Name of the selection's reference; its target is the configuration's {@code changeSource.target}. */
    static final String SOURCE_REFERENCE = "changeSource";
    /** The selection's target when the configuration sets none (the shipped Postgres source). */
    static final String DEFAULT_SOURCE_TARGET = "(" + ChangeSource.TYPE + "=pg)";
    /** The property {@code changeSource.target} replaced; still read, to say so. */
    private static final String RETIRED_SOURCE_TYPE = "changesource.type";
    private static final Logger LOG = LoggerFactory.getLogger(ChangeStreamerComponent.class);

    private final SourceSlot sources;
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
            BundleContext context, Map<String, Object> properties) {
        StreamerSettings settings;
        try {
            settings = settings(config, httpPort(context));
        } catch (IllegalArgumentException e) {
            LOG.error("change-streamer: invalid configuration of {}: {}", PID, e.getMessage());
            throw new IllegalArgumentException("invalid configuration of " + PID + ": " + e.getMessage(), e);
        }
        this.sources = new SourceSlot(config.changeSource_target().strip(), Duration.ofMillis(config.changeSource_graceMs()));
        if (properties.containsKey(RETIRED_SOURCE_TYPE)) {
            LOG.warn("change-streamer: {} in {} is no longer read; the change source is selected by changeSource.target"
                    + " (now {}). Replace the line with: changeSource.target = (zrm.changesource.type=<type>)",
                    RETIRED_SOURCE_TYPE, PID, sources.target());
        }
        Reservations reservations = new Reservations();
        java.nio.file.Path replica = java.nio.file.Path.of(config.replica_file());
        this.service = new ChangeStreamerService(settings, storerFactory, sources, null, reservations,
                () -> java.nio.file.Files.isRegularFile(replica));
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
        LOG.info("change-streamer: task {} for {}_{} (change source {}, address {}, autoReset {})",
                settings.taskID(), config.app_id(), config.shard_num(), sources.target(), settings.ownerAddress(), settings.autoReset());
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
        sourceTarget(c.changeSource_target());
        if (c.changeSource_graceMs() < 0) {
            throw new IllegalArgumentException("changeSource.graceMs must not be negative: " + c.changeSource_graceMs());
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

    /**
     * Checks the target filter's syntax, so that a typo is one clear activation error instead of a
     * selection that can never be satisfied.
     */
    static Filter sourceTarget(String target) {
        if (target == null || target.isBlank()) {
            throw new IllegalArgumentException("changeSource.target must not be empty");
        }
        try {
            return FrameworkUtil.createFilter(target.strip());
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("changeSource.target is not a valid filter: " + target.strip()
                    + " (" + e.getMessage() + ")", e);
        }
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void bindSelection(SelectedChangeSource selection) {
        ChangeSource previous = sources.set(selection.source());
        LOG.info("change-streamer: change source of type {} selected by {}{}", selection.type(), sources.target(),
                previous == null || previous == selection.source() ? "" : ", replacing the previous one");
    }

    void unbindSelection(SelectedChangeSource selection) {
        // Also after a replacement (DS binds the new selection before it unbinds the old): the
        // old source's stream must still end.
        sources.clear(selection.source());
        service.sourceRemoved(selection.source());
    }

    /**
     * Every registered change source, by its service properties only (never got): the types named
     * when nothing matches the target.
     */
    @Reference(service = ChangeSource.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC)
    void addRegisteredSource(Map<String, Object> properties) {
        sources.registered(properties, true);
    }

    void removeRegisteredSource(Map<String, Object> properties) {
        sources.registered(properties, false);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addRestorer(org.zrm.backup.ReplicaRestorer restorer) {
        restorers.set(restorer);
    }

    void removeRestorer(org.zrm.backup.ReplicaRestorer restorer) {
        restorers.clear(restorer);
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

    // Operator actions (zrm:subscribers, zrm:changelog); the logic lives in ChangeStreamerService.
    @Override
    public void closeSubscriber(String id, String reason) throws OperationException {
        if (!service.closeSubscriber(id, reason)) {
            throw new OperationException("no connected subscriber with id " + id);
        }
    }

    @Override
    public PurgePreview previewPurge() throws OperationException {
        try {
            return service.previewPurge();
        } catch (ChangeLogException e) {
            throw new OperationException("cannot read the change log: " + e.getMessage(), e);
        }
    }

    @Override
    public String section() {
        return "changestreamer";
    }

    @Override
    public Map<String, Object> status() {
        Map<String, Object> status = new LinkedHashMap<>(service.status());
        status.put("changeSource", sources.status());
        // The readiness convention of /readyz: streaming, which implies an initialized replica and log.
        status.put("ready", service.state() == ChangeStreamerService.State.STREAMING);
        status.put("terminalStop", terminalStop.status());
        return status;
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

    /**
     * The selected source, which the stream loop waits on (signal, no polling), and what to say
     * when there is none.
     */
    static final class SourceSlot implements ChangeStreamerService.SourceProvider {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private final String target;
        private final Duration grace;
        /** Registered sources' service ids → types; bounded by the services in the framework. */
        private final Map<Object, String> registeredTypes = new ConcurrentHashMap<>();
        private ChangeSource current;

        SourceSlot(String target, Duration grace) {
            this.target = target;
            this.grace = grace;
        }

        /** A slot that accepts whatever is set, for tests that bind sources by hand. */
        SourceSlot() {
            this("(" + ChangeSource.TYPE + "=*)", Duration.ofSeconds(10));
        }

        String target() {
            return target;
        }

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

        void registered(Map<String, Object> properties, boolean present) {
            Object id = properties.get(org.osgi.framework.Constants.SERVICE_ID);
            if (present) {
                registeredTypes.put(id, String.valueOf(properties.get(ChangeSource.TYPE)));
            } else {
                registeredTypes.remove(id);
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

        @Override
        public Duration grace() {
            return grace;
        }

        @Override
        public String missingReason() {
            List<String> types = new TreeSet<>(registeredTypes.values()).stream().toList();
            return "no change source matches changeSource.target " + target + " (waited " + grace.toMillis()
                    + " ms); registered change-source types: " + (types.isEmpty() ? "none" : String.join(", ", types))
                    + ". Set ZERO_UPSTREAM_TYPE to one of them, or deploy a bundle that registers an "
                    + ChangeSource.class.getName() + " service matching " + target;
        }

        /** The {@code changeSource} part of the status section. */
        Map<String, Object> status() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("target", target);
            lock.lock();
            try {
                m.put("selected", current != null);
            } finally {
                lock.unlock();
            }
            m.put("registeredTypes", new TreeSet<>(registeredTypes.values()).stream().toList());
            return m;
        }
    }

}
