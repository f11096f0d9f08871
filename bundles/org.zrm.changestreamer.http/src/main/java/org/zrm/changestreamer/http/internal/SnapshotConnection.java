package org.zrm.changestreamer.http.internal;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.protocol.subscriber.SnapshotStatus;

/**
 * A {@code /replication/v{N}/snapshot} connection, which is itself the
 * {@link SnapshotReservation}: registered with {@link ChangeStreamer#reserveSnapshot}, it carries
 * one status frame and is then held open until either side ends it.
 *
 * <p>When the client closes, the reservation just reports {@link #isClosed()}; it does not call
 * {@link ChangeStreamer#endReservation}, which would raise the cleanup delay (upstream ends a
 * reservation whose socket closed with {@code updateCleanupDelay=false}) and could end a newer
 * reservation of the same task.
 */
final class SnapshotConnection extends WsConnection implements SnapshotReservation {

    private static final Logger LOG = LoggerFactory.getLogger(SnapshotConnection.class);

    private final String taskID;
    private final Instant startedAt = Instant.now();
    private final AtomicBoolean statusSent = new AtomicBoolean();

    SnapshotConnection(ConnectionResources resources, ChangeStreamer streamer, String taskID) {
        super(resources, streamer);
        this.taskID = taskID;
    }

    @Override
    protected void opened() {
        try {
            streamer().reserveSnapshot(taskID, this);
            LOG.info("{}: snapshot reserved", describe());
        } catch (SnapshotUnavailableException e) {
            resources.metrics().rejected();
            LOG.warn("{}: snapshot unavailable: {}", describe(), e.getMessage());
            close(PROTOCOL_ERROR, "Error: " + e.getMessage());
        }
    }

    @Override
    protected void ended() {
        LOG.info("{}: reservation ended", describe());
    }

    @Override
    protected String describe() {
        return "snapshot[task=" + taskID + "]";
    }

    @Override
    public String taskID() {
        return taskID;
    }

    @Override
    public Instant startedAt() {
        return startedAt;
    }

    @Override
    public boolean sendStatus(SnapshotStatus status) {
        if (hasEnded() || !statusSent.compareAndSet(false, true)) {
            return false;
        }
        String json = resources.codec().encode(status);
        try {
            // The first frame of an empty window never waits, so this does not block the caller.
            return sendFrame(json);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void fail(Throwable cause) {
        if (!hasEnded()) {
            LOG.warn("{}: reservation failed, closing connection: {}", describe(), cause.toString());
        }
        close(INTERNAL_ERROR, "Error: " + cause.getMessage());
    }

    @Override
    public void close() {
        close(WebSocketFrames.NORMAL, "");
    }

    @Override
    public boolean isClosed() {
        return hasEnded();
    }
}
