package org.zrm.changestreamer.internal;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.zrm.changestreamer.ReplicatorMode;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Downstream;
import org.zrm.protocol.subscriber.ErrorType;
import org.zrm.protocol.subscriber.SubscriptionError;

/**
 * One subscriber's state (upstream {@code Subscriber}, spec §4): the watermark of the last commit
 * sent, the last commit the client acknowledged, the catch-up backlog and the protocol filter.
 *
 * <p>A subscriber starts in catch-up: live changes newer than its watermark are kept in a backlog
 * while the catch-up reader sends the stored ones; {@link #setCaughtUp()} flushes the backlog and
 * switches to direct sends. Every send re-checks {@code watermark > this.watermark}, and the
 * watermark moves to a commit's watermark before the commit is sent, so a transaction delivered by
 * catch-up is dropped when the backlog repeats it (no duplicate), and a rolled-back transaction
 * that is replayed is not (the watermark moves on commit only).
 *
 * <p>The first message of a valid v2+ subscription is a {@code status}, sent once the watermark is
 * validated (first catch-up row or {@link #setCaughtUp()}).
 *
 * <p><b>A backlog over the byte bound</b>, of a subscriber that still reads, is dropped, and the
 * subscriber stays connected: a subscriber still catching up when a bulk load streams past it (it
 * joined late, or reconnected) would otherwise be disconnected, reconnect at its last commit, be
 * sent again everything from there, and fall behind again, over and over while the load lasts. Everything
 * dropped is in the change log, since a change is forwarded only together with its enqueueing to
 * the storer. The live changes from then on are left to the log as well, and the round in progress
 * ends without going live ({@link #setCaughtUp()} returns {@code false}): the subscriber is caught
 * up again from its watermark, which the round left at a commit, in a new round
 * ({@link #startRound()}). So memory stays within the bound, nothing is sent twice, and every
 * round starts where the last one ended. A subscriber that stopped reading (messages wait in its
 * outbox, and it consumed none of them since the last drop) is disconnected at its bound, as a live
 * subscriber over its bound is ({@link Outbox}): it should not hold a catch-up thread and a pinned
 * snapshot until its liveness check ends it. After a drop, the live changes that pass it are still
 * counted, so a client that stops reading later is found out one bound further on.
 *
 * <p><b>Threading.</b> Live sends come from the stream loop, catch-up from a catch-up thread;
 * state is guarded by {@code this}. Failing or closing never happens while holding that lock,
 * because it calls back into the forwarder.
 */
final class Subscriber {

    private static final CompletableFuture<Outbox.Result> SETTLED =
            CompletableFuture.completedFuture(Outbox.Result.UNCONSUMED);

    final String id;
    final int protocolVersion;
    final ReplicatorMode mode;
    final String replicaVersion;
    final long connectedAtMillis = System.currentTimeMillis();
    private final Outbox outbox;
    private final Supplier<String> latestStatus;
    private final ProtocolCodec codec;
    private final long maxBufferedBytes;

    // Guarded by this.
    private String watermark;
    private ArrayDeque<WatermarkedChange> backlog = new ArrayDeque<>();
    private long backlogBytes;
    private boolean initialized;
    private boolean rejected;
    /** The backlog went over the bound in this catch-up round: live changes are left to the next round. */
    private boolean backlogDropped;
    /** Messages the client had consumed when its backlog was last dropped. */
    private long consumedAtLastDrop;
    /** Characters of the live changes not kept since the backlog was dropped. */
    private long passedBytes;
    /**
     * Scratch for {@link #sendUntracked(WatermarkedChange[], int)}: the changes that pass the
     * filters. Not cleared after use: it keeps at most a run of changes that every subscriber
     * shares anyway until the next run overwrites them, and clearing it was one more store per
     * change and subscriber.
     */
    private final WatermarkedChange[] sendable = new WatermarkedChange[Forwarder.MAX_RUN];

    private volatile String acked;
    /** {@link #onAcked}, made once rather than per commit sent. */
    private final Consumer<String> ackedCommit = this::onAcked;
    private volatile long lastConsumedAtMillis;

    Subscriber(int protocolVersion, String id, ReplicatorMode mode, String replicaVersion, String watermark,
            Outbox outbox, Supplier<String> latestStatus, ProtocolCodec codec, long maxBufferedBytes) {
        this.replicaVersion = replicaVersion;
        this.protocolVersion = protocolVersion;
        this.id = id;
        this.mode = mode;
        this.watermark = watermark;
        this.acked = watermark;
        this.outbox = outbox;
        this.latestStatus = latestStatus;
        this.codec = codec;
        this.maxBufferedBytes = maxBufferedBytes;
    }

    Outbox outbox() {
        return outbox;
    }

    synchronized String watermark() {
        return watermark;
    }

    /** @return the newest commit watermark whose frame the client has consumed */
    String acked() {
        return acked;
    }

    long lastConsumedAtMillis() {
        return lastConsumedAtMillis;
    }

    synchronized boolean isCatchingUp() {
        return backlog != null;
    }

    boolean isClosed() {
        return outbox.isClosed();
    }

    /**
     * Sends a live change: dropped if not newer than the watermark, kept in the backlog during
     * catch-up, sent otherwise.
     *
     * @return settles when the change is consumed, filtered, buffered in the backlog, or the
     *     subscription ends (what flow control waits for)
     */
    CompletableFuture<Outbox.Result> send(WatermarkedChange change) {
        Outbox.Message m = offer(change);
        return m == null ? SETTLED : m.result();
    }

    /**
     * {@link #send} of consecutive changes nobody waits on (an untracked fan-out), under one lock
     * of this subscriber and one of its outbox, and with no future made for them: the stream loop
     * fans out runs of a transaction's changes, and most live changes are sent this way, once per
     * subscriber. Only the last may end a transaction (the forwarder's rule), so the watermark
     * check sees the same watermark as one change at a time would.
     */
    void sendUntracked(WatermarkedChange[] changes, int n) {
        Throwable overflow = null;
        synchronized (this) {
            if (rejected) {
                return;
            }
            if (backlog != null) {
                for (int i = 0; i < n && overflow == null; i++) {
                    if (changes[i].watermark().compareTo(watermark) > 0) {
                        overflow = keep(changes[i]);
                    }
                }
            } else {
                int k = 0;
                for (int i = 0; i < n; i++) {
                    if (admit(changes[i])) {
                        sendable[k++] = changes[i];
                    }
                }
                int appended = outbox.appendAll(sendable, k, ackedCommit);
                if (appended < k) {
                    overflow = refused(sendable[appended].json());
                }
            }
        }
        if (overflow != null) {
            fail(overflow);
        }
    }

    /**
     * Keeps a live change in the catch-up backlog. At the bound, the backlog is dropped unless the
     * client has stopped reading, and from then on until the next round live changes are only
     * counted, so that a client that stops reading later in the round is still found out one bound
     * further on (see the class description).
     *
     * @return the overflow that disconnects a client that stopped reading, else {@code null}
     */
    private Throwable keep(WatermarkedChange change) {
        long size = change.jsonLength();
        long held = backlogDropped ? passedBytes : backlogBytes;
        long buffered = outbox.bufferedBytes() + held;
        if (Outbox.exceedsBound(buffered, size, maxBufferedBytes)) {
            // Stopped reading: messages wait in its outbox, and it consumed none of them since the
            // last drop. (An empty outbox means the catch-up has not sent anything yet.)
            long consumed = outbox.consumedMessages();
            if (consumed == consumedAtLastDrop && outbox.pendingMessages() > 0) {
                return overflow(buffered + size);
            }
            consumedAtLastDrop = consumed;
            backlog.clear();
            backlogBytes = 0;
            backlogDropped = true;
            passedBytes = 0; // the next bound is counted from here
            return null;
        }
        if (backlogDropped) {
            passedBytes += size;
        } else {
            backlog.addLast(change);
            backlogBytes += size;
        }
        return null;
    }

    /** @return the appended message, or {@code null} if the change settled at once (filtered, kept, failed) */
    private Outbox.Message offer(WatermarkedChange change) {
        Throwable overflow = null;
        Outbox.Message appended = null;
        synchronized (this) {
            if (rejected || change.watermark().compareTo(watermark) <= 0) {
                return null;
            }
            if (backlog != null) {
                overflow = keep(change);
            } else {
                Object r = sendChange(change);
                if (r instanceof Throwable t) {
                    overflow = t;
                } else {
                    appended = (Outbox.Message) r;
                }
            }
        }
        if (overflow != null) {
            fail(overflow);
        }
        return appended;
    }

    /** Sends a lag-report status to an initialized v2+ subscriber. */
    void sendStatus(String statusJson) {
        Throwable overflow;
        synchronized (this) {
            if (rejected || !initialized || protocolVersion < 2) {
                return;
            }
            overflow = appendOrOverflow(statusJson, null);
        }
        if (overflow != null) {
            fail(overflow);
        }
    }

    /**
     * Sends a change read from the change log.
     *
     * @return settles when the change is consumed (the catch-up reader paces itself on it), or
     *     at once if it was filtered
     */
    CompletableFuture<Outbox.Result> catchup(WatermarkedChange change) {
        Outbox.Message m = catchupMessage(change);
        return m == null ? SETTLED : m.result();
    }

    /**
     * {@link #catchup} for a change the reader does not pace on: the same delivery without a
     * future. The reader tracks one change in a batch, not each of them.
     */
    void catchupUntracked(WatermarkedChange change) {
        Throwable overflow;
        synchronized (this) {
            if (rejected) {
                return;
            }
            initialize();
            overflow = sendShared(change);
        }
        if (overflow != null) {
            fail(overflow);
        }
    }

    /** @return the appended message, or {@code null} if the change settled at once (filtered, failed) */
    private Outbox.Message catchupMessage(WatermarkedChange change) {
        Object r;
        synchronized (this) {
            if (rejected) {
                return null;
            }
            initialize();
            r = sendChange(change);
        }
        if (r instanceof Throwable t) {
            fail(t);
            return null;
        }
        return (Outbox.Message) r;
    }

    /**
     * Ends a catch-up round: sends the status if not yet sent, then, unless the backlog was
     * dropped, flushes it in order and switches to live sends.
     *
     * @return {@code false} if the backlog was dropped in this round: the subscriber is still
     *     catching up and needs another round from its {@link #watermark()}
     */
    boolean setCaughtUp() {
        Throwable overflow = null;
        synchronized (this) {
            if (rejected || backlog == null) {
                return true;
            }
            initialize();
            if (backlogDropped) {
                return false;
            }
            // Upstream flushes the backlog without flow control; it is bounded by maxBufferedBytes.
            ArrayDeque<WatermarkedChange> pending = backlog;
            backlog = null;
            backlogBytes = 0;
            for (WatermarkedChange c : pending) {
                overflow = sendShared(c);
                if (overflow != null) {
                    break;
                }
            }
        }
        if (overflow != null) {
            fail(overflow);
        }
        return true;
    }

    /**
     * Starts another catch-up round after one whose backlog was dropped: the backlog keeps live
     * changes again, from the stream position the new round's snapshot is pinned at (the caller
     * holds the stream lock and asks the storer for that snapshot). For a new subscriber it changes
     * nothing.
     */
    synchronized void startRound() {
        if (backlog != null) {
            backlog.clear();
            backlogBytes = 0;
            backlogDropped = false;
            passedBytes = 0;
        }
    }

    /**
     * Rejects the subscription with an error frame; the subscription ends once the client has
     * consumed it. {@link ErrorType#UNKNOWN} is never sent (upstream quirk H3, kept: clients retry
     * on a plain close), it just fails the subscription.
     */
    void close(ErrorType type, String message) {
        if (type == ErrorType.UNKNOWN) {
            fail(new IllegalStateException(message));
            return;
        }
        Outbox.Message m;
        synchronized (this) {
            if (rejected) {
                return;
            }
            rejected = true;
            backlog = null;
            m = outbox.append(codec.encode(new Downstream.ErrorMessage(new SubscriptionError(type, message))),
                    null, null);
        }
        if (m == null) {
            outbox.end();
        } else {
            m.result().whenComplete((r, e) -> outbox.end());
        }
    }

    /** Ends the subscription without an error frame; the client reconnects from its watermark. */
    void fail(Throwable cause) {
        synchronized (this) {
            rejected = true;
            backlog = null;
        }
        outbox.fail(cause);
    }

    /**
     * Ends the subscription without an error frame once the client has been handed what is
     * already queued (see {@link Outbox#failAfterQueued}); nothing is sent after this call.
     */
    void failAfterQueued(Throwable cause) {
        synchronized (this) {
            rejected = true;
            backlog = null;
        }
        outbox.failAfterQueued(cause);
    }

    private void initialize() {
        if (!initialized) {
            initialized = true;
            if (protocolVersion >= 2) {
                appendOrOverflow(latestStatus.get(), null);
            }
        }
    }

    /**
     * @return the appended message, {@code null} if the change settled at once (not newer, filtered
     *     by protocol version, or the subscription closed), or a Throwable if the byte bound was hit
     */
    private Object sendChange(WatermarkedChange change) {
        if (!admit(change)) {
            return null;
        }
        Outbox.Message m = outbox.append(change, ackedCommit);
        return m != null ? m : refused(change.json());
    }

    /**
     * {@link #sendChange} of a change nobody waits on, queued as the shared change itself: a run
     * of one for {@link Outbox#appendAll}, through the run scratch ({@link #sendable}, under this
     * subscriber's lock like every use of it).
     *
     * @return the overflow if the byte bound was hit, else {@code null}
     */
    private Throwable sendShared(WatermarkedChange change) {
        if (!admit(change)) {
            return null;
        }
        sendable[0] = change;
        return outbox.appendAll(sendable, 1, ackedCommit) == 1 ? null : refused(change.json());
    }

    /**
     * Whether {@code change} goes out to this subscriber: newer than its watermark and known to its
     * protocol version. A commit that does moves the watermark, before it is appended, so a
     * transaction sent once is not sent again (see the class description).
     */
    private boolean admit(WatermarkedChange change) {
        if (change.watermark().compareTo(watermark) <= 0 || !supports(change.tag())) {
            return false;
        }
        if (change.isCommit()) {
            watermark = change.watermark();
        }
        return true;
    }

    private Throwable appendOrOverflow(String json, String commitWatermark) {
        return outbox.append(json, commitWatermark, null) == null ? refused(json) : null;
    }

    /**
     * Why the outbox refused to append {@code json}: the overflow to fail the subscription with, or
     * {@code null} if it refused because the subscription is closed already.
     */
    private Throwable refused(String json) {
        return outbox.isClosed() ? null : overflow(outbox.bufferedBytes() + json.length());
    }

    private Throwable overflow(long wouldBe) {
        return new Outbox.BufferLimitException("subscriber " + id + " would buffer " + wouldBe
                + " unconsumed bytes, more than changeStreamer.subscriberMaxBufferedBytes=" + maxBufferedBytes
                + "; disconnecting it so that it reconnects and catches up from the change log");
    }

    private void onAcked(String commitWatermark) {
        lastConsumedAtMillis = System.currentTimeMillis();
        synchronized (this) {
            if (commitWatermark.compareTo(acked) > 0) {
                acked = commitWatermark;
            }
        }
    }

    /** Protocol filter: {@code update-table-metadata} exists from v5 on. */
    boolean supports(String tag) {
        return !"update-table-metadata".equals(tag) || protocolVersion >= 5;
    }

    /** @return the messages buffered in the backlog (tests and status) */
    synchronized List<WatermarkedChange> backlogSnapshot() {
        return backlog == null ? List.of() : List.copyOf(backlog);
    }

    /** @return backlog plus unconsumed bytes */
    synchronized long bufferedBytes() {
        return outbox.bufferedBytes() + backlogBytes;
    }
}
