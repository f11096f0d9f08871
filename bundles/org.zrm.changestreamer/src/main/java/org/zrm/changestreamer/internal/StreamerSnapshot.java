package org.zrm.changestreamer.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.zrm.changelog.Storer;

/**
 * One consistent-enough reading of the change streamer, taken once per {@code /status} or
 * {@code /metrics} request and rendered by both ({@link #toStatus()}, {@link StreamerMetrics}),
 * so the two never disagree about what they show. Immutable; the figures are read without taking
 * the stream lock, so they may be a message apart from each other.
 *
 * @param state the supervisor's life-cycle state
 * @param lastError the last failure that ended a stream or the streamer, or {@code null}
 * @param taskID this node's task id
 * @param ownerAddress the address published with ownership
 * @param replicaVersion the replica version served, {@code null} before initialization and
 *     during a re-sync
 * @param streamStartWatermark where the current (or last) stream started
 * @param lastStoredWatermark the last commit the change log holds durably
 * @param lastAckedWatermark the last watermark acknowledged upstream
 * @param transactions transactions forwarded and stored
 * @param changes data changes forwarded and stored
 * @param restarts stream restarts after an error
 * @param resets in-process re-syncs
 * @param subscriptions subscriptions received
 * @param droppedSubscribers subscribers the streamer disconnected
 * @param repeatedCatchups catch-up rounds started again because the subscriber fell more than its
 *     byte bound behind the live stream while catching up
 * @param flowControlWindow the configured flow-control window
 * @param broadcastsInFlight tracked broadcasts not yet settled
 * @param flowControlWaits times the stream waited for the window
 * @param flowControlWaitNanos time spent waiting for the window
 * @param storer the running storer's figures, {@link StorerView#NONE} between streams
 * @param subscribers the connected subscribers
 * @param pendingSubscribers subscriptions waiting to be registered
 * @param pendingCleanups confirmed watermarks waiting to be purged
 * @param purgedRows change-log rows purged
 * @param lastForwardedCommit the newest commit forwarded to subscribers, {@code null} if none
 * @param lag the upstream lag measured by the lag reports
 */
record StreamerSnapshot(ChangeStreamerService.State state, String lastError, String taskID, String ownerAddress,
        String replicaVersion, String streamStartWatermark, String lastStoredWatermark, String lastAckedWatermark,
        long transactions, long changes, long restarts, long resets, long subscriptions, long droppedSubscribers,
        long repeatedCatchups,
        int flowControlWindow, int broadcastsInFlight, long flowControlWaits, long flowControlWaitNanos,
        StorerView storer, List<SubscriberView> subscribers, int pendingSubscribers, List<String> pendingCleanups,
        long purgedRows, String lastForwardedCommit, LagTracker.View lag) {

    StreamerSnapshot {
        subscribers = List.copyOf(subscribers);
        pendingCleanups = List.copyOf(pendingCleanups);
    }

    /** The storer's queue figures. */
    record StorerView(long queuedBytes, long limitBytes, boolean backPressure, long backPressureEvents) {
        static final StorerView NONE = new StorerView(0, 0, false, 0);

        static StorerView of(Storer s) {
            return s == null ? NONE
                    : new StorerView(s.queuedBytes(), s.limitBytes(), s.isApplyingBackPressure(), s.backPressureEvents());
        }
    }

    /**
     * One subscriber.
     *
     * @param msSinceLastAck milliseconds since it last consumed a commit, {@code null} if never
     * @param lagBytes WAL bytes from its last acknowledged watermark to the newest forwarded commit
     *     (watermarks of the pg change source are LSNs); {@code null} if unknown
     * @param lagMs age of the oldest forwarded commit it has not acknowledged, 0 when caught up;
     *     {@code null} if no commit was forwarded yet
     * @param lagMsAtLeast whether that commit is older than the streamer remembers, so
     *     {@code lagMs} is a lower bound
     */
    record SubscriberView(String id, String mode, int protocolVersion, String watermark, String acked,
            boolean catchingUp, Long msSinceLastAck, int pendingMessages, long bufferedBytes, Long lagBytes,
            Long lagMs, boolean lagMsAtLeast) {

        static SubscriberView of(Subscriber sub, long nowMillis, String head, CommitTimeline timeline) {
            long last = sub.lastConsumedAtMillis();
            String position = sub.acked() != null ? sub.acked() : sub.watermark();
            CommitTimeline.Lag lag = timeline.lagOf(position, nowMillis);
            return new SubscriberView(sub.id, sub.mode.wireName(), sub.protocolVersion, sub.watermark(), sub.acked(),
                    sub.isCatchingUp(), last == 0 ? null : nowMillis - last, sub.outbox().pendingMessages(),
                    sub.bufferedBytes(), bytesBehind(head, position), lag == null ? null : lag.ms(),
                    lag != null && lag.atLeast());
        }
    }

    /**
     * @return the LSN distance from {@code position} up to {@code head}, 0 when at or past it,
     *     {@code null} when either is missing or is not an LSN watermark
     */
    static Long bytesBehind(String head, String position) {
        if (head == null || position == null) {
            return null;
        }
        try {
            long h = org.zrm.watermark.Watermarks.toLsn(head).asLong();
            long p = org.zrm.watermark.Watermarks.toLsn(position).asLong();
            return Long.compareUnsigned(h, p) <= 0 ? 0L : h - p;
        } catch (IllegalArgumentException notAnLsn) {
            return null;   // another change source's watermarks: there is no byte distance to tell
        }
    }

    /** @return the {@code changestreamer} section of {@code /status} */
    Map<String, Object> toStatus() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", state.name().toLowerCase(Locale.ROOT));
        m.put("lastError", lastError);
        m.put("taskID", taskID);
        m.put("ownerAddress", ownerAddress);
        m.put("replicaVersion", replicaVersion);
        m.put("streamStartWatermark", streamStartWatermark);
        m.put("lastStoredWatermark", lastStoredWatermark);
        m.put("lastAckedWatermark", lastAckedWatermark);
        m.put("transactions", transactions);
        m.put("changes", changes);
        m.put("restarts", restarts);
        m.put("resets", resets);
        m.put("repeatedCatchups", repeatedCatchups);
        Map<String, Object> fc = new LinkedHashMap<>();
        fc.put("window", flowControlWindow);
        fc.put("inFlight", broadcastsInFlight);
        fc.put("waits", flowControlWaits);
        fc.put("waitedMs", flowControlWaitNanos / 1_000_000);
        m.put("flowControl", fc);
        Map<String, Object> st = new LinkedHashMap<>();
        st.put("queuedBytes", storer.queuedBytes());
        st.put("limitBytes", storer.limitBytes());
        st.put("backPressure", storer.backPressure());
        st.put("backPressureEvents", storer.backPressureEvents());
        m.put("storer", st);
        List<Object> subs = new ArrayList<>();
        for (SubscriberView sub : subscribers) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("id", sub.id());
            e.put("mode", sub.mode());
            e.put("protocolVersion", sub.protocolVersion());
            e.put("watermark", sub.watermark());
            e.put("acked", sub.acked());
            e.put("catchingUp", sub.catchingUp());
            e.put("msSinceLastAck", sub.msSinceLastAck());
            e.put("pendingMessages", sub.pendingMessages());
            e.put("bufferedBytes", sub.bufferedBytes());
            e.put("lagBytes", sub.lagBytes());
            e.put("lagMs", sub.lagMs());
            e.put("lagMsAtLeast", sub.lagMsAtLeast());
            subs.add(e);
        }
        m.put("subscribers", subs);
        m.put("pendingSubscribers", pendingSubscribers);
        m.put("pendingCleanups", pendingCleanups);
        m.put("purgedRows", purgedRows);
        m.put("lastForwardedCommit", lastForwardedCommit);
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("reports", lag.reports());
        l.put("replicationMs", lag.replicationMs());
        l.put("storageMs", lag.storageMs());
        l.put("endToEndMs", lag.endToEndMs());
        l.put("lastEndToEndMs", lag.lastEndToEndMs());
        l.put("msSinceLastReport", lag.msSinceLastReport());
        m.put("upstreamLag", l);
        return m;
    }
}
