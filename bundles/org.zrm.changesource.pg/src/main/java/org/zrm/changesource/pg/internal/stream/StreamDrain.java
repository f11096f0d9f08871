package org.zrm.changesource.pg.internal.stream;

import java.time.Duration;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * Consumes a change stream and discards every message after it was parsed and converted, acking
 * each commit and each echo-requesting status at once: the change source's share of the
 * {@code source-W1}/{@code source-W2} benchmarks, and a tool for tests.
 *
 * <p>Typical use: {@code PgChangeSource.openStream(slot, pubs, watermark)}, then
 * {@code new StreamDrain(stream).drainCommits(n, timeout)}.
 */
public final class StreamDrain {

    private final ChangeStream stream;
    private long messages;
    private long dataChanges;
    private long commits;

    public StreamDrain(ChangeStream stream) {
        this.stream = stream;
    }

    /**
     * Drains until {@code commitCount} more transactions were committed.
     *
     * @return {@code true} if they arrived, {@code false} if {@code idleTimeout} passed without a message
     */
    public boolean drainCommits(long commitCount, Duration idleTimeout) throws ChangeSourceException, InterruptedException {
        long target = commits + commitCount;
        while (commits < target) {
            ChangeStreamMessage m = stream.poll(idleTimeout);
            if (m == null) {
                return false;
            }
            messages++;
            if (m instanceof ChangeStreamMessage.DataMessage) {
                dataChanges++;
            } else if (m instanceof ChangeStreamMessage.CommitMessage c) {
                commits++;
                stream.ack(new ChangeSourceUpstream(c.commit(), c.watermark()));
            } else if (m instanceof ChangeStreamMessage.StatusMessage s && s.status().ackRequested()) {
                stream.ack(new ChangeSourceUpstream(s.status(), s.watermark()));
            }
        }
        return true;
    }

    /** @return messages taken so far */
    public long messages() {
        return messages;
    }

    /** @return data changes (insert/update/delete/truncate) taken so far */
    public long dataChanges() {
        return dataChanges;
    }

    /** @return commits taken (and acked) so far */
    public long commits() {
        return commits;
    }
}
