package org.zrm.replicator.internal;

import java.util.concurrent.atomic.AtomicLong;
import org.zrm.replica.ReplicaState;

/**
 * Live figures of a {@link Replicator}, written by its thread and read by status and metrics
 * threads (volatile/atomic fields only, never blocking).
 */
final class ReplicatorStatus {

    /** What the replicator is doing. */
    enum Phase {
        /** No completed replica file yet (initial sync still running), or waiting for a new one. */
        WAITING_FOR_REPLICA,
        CONNECTING,
        REPLICATING,
        /** Waiting before reconnecting after a failure. */
        BACKING_OFF,
        /** Rejected by the change streamer; waits until the replica file is replaced by a new sync. */
        STOPPED_ON_ERROR,
        STOPPED
    }

    private final AtomicLong transactionsApplied = new AtomicLong();
    private final AtomicLong rollbacks = new AtomicLong();
    private final AtomicLong reconnects = new AtomicLong();
    private volatile Phase phase = Phase.WAITING_FOR_REPLICA;
    private volatile boolean connected;
    private volatile String replicaVersion;
    private volatile String stateVersion;
    private volatile String lastError;
    private volatile long lastErrorTimeMs;
    private volatile long lastCommitTimeMs;
    private volatile long lastCommitLagMs = -1;

    Phase phase() {
        return phase;
    }

    void phase(Phase p) {
        phase = p;
    }

    boolean connected() {
        return connected;
    }

    void connected(boolean c) {
        connected = c;
    }

    String replicaVersion() {
        return replicaVersion;
    }

    String stateVersion() {
        return stateVersion;
    }

    void replica(ReplicaState state) {
        replicaVersion = state.replicaVersion();
        stateVersion = state.stateVersion();
    }

    void committed(String watermark, long lagMs) {
        stateVersion = watermark;
        lastCommitTimeMs = System.currentTimeMillis();
        lastCommitLagMs = lagMs;
        transactionsApplied.incrementAndGet();
    }

    void rolledBack() {
        rollbacks.incrementAndGet();
    }

    void reconnecting() {
        reconnects.incrementAndGet();
    }

    void error(String message) {
        // Shown in /status: a message quoting a URL must not carry its credentials.
        lastError = message == null ? null : org.zrm.secret.Secrets.maskUrls(message);
        lastErrorTimeMs = System.currentTimeMillis();
    }

    String lastError() {
        return lastError;
    }

    long lastErrorTimeMs() {
        return lastErrorTimeMs;
    }

    long transactionsApplied() {
        return transactionsApplied.get();
    }

    long rollbacks() {
        return rollbacks.get();
    }

    long reconnects() {
        return reconnects.get();
    }

    long lastCommitTimeMs() {
        return lastCommitTimeMs;
    }

    /** Upstream commit time to replica commit, in ms, of the last transaction; -1 if unknown. */
    long lastCommitLagMs() {
        return lastCommitLagMs;
    }
}
