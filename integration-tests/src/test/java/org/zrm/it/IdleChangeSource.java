package org.zrm.it;

import java.util.Hashtable;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;

/**
 * A change source that never finishes initializing, registered by a one-class bundle that
 * {@link ZrmRuntimeOptions#idleStreamerOptions} installs: the streamer's selection is satisfied
 * (so {@code /status} can be healthy), but the streamer never gets a replica version, never
 * writes the replication config and never takes ownership of the change log.
 */
public final class IdleChangeSource implements ChangeSource, BundleActivator {

    private final CountDownLatch stopped = new CountDownLatch(1);

    @Override
    public void start(BundleContext context) {
        Hashtable<String, Object> properties = new Hashtable<>();
        properties.put(ChangeSource.TYPE, ZrmRuntimeOptions.NO_SOURCE_TYPE);
        context.registerService(ChangeSource.class, this, properties);
    }

    @Override
    public void stop(BundleContext context) {
        stopped.countDown();
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        stopped.await();
        throw new ChangeSourceException("the idle test source was stopped");
    }

    @Override
    public OptionalLong startLagReporter() {
        return OptionalLong.empty();
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException {
        throw new ChangeSourceException("the idle test source never streams");
    }

    @Override
    public void stop() {
        stopped.countDown();
    }
}
