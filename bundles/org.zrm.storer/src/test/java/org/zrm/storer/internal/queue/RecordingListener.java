package org.zrm.storer.internal.queue;

import org.zrm.changelog.StorerListener;
import org.zrm.changelog.CatchupHandler;
import org.zrm.changelog.CatchupRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.zrm.changelog.ChangeLogException;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.Commit;

/** Records what the queue reports, as "stored:W", "stored-noack:W" and "status:W" events. */
final class RecordingListener implements StorerListener, CatchupHandler {

    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    final List<ChangeSourceUpstream> acks = Collections.synchronizedList(new ArrayList<>());
    final LinkedBlockingQueue<String> eventQueue = new LinkedBlockingQueue<>();
    final CompletableFuture<ChangeLogException> failure = new CompletableFuture<>();
    final List<List<CatchupRequest>> catchups = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void stored(String commitWatermark, ChangeSourceUpstream ack) {
        if (ack != null) {
            if (!(ack.body() instanceof Commit) || !ack.watermark().equals(commitWatermark)) {
                throw new AssertionError("bad ack " + ack);
            }
            acks.add(ack);
        }
        add((ack == null ? "stored-noack:" : "stored:") + commitWatermark);
    }

    @Override
    public void statusAcked(ChangeSourceUpstream echo) {
        acks.add(echo);
        add("status:" + echo.watermark());
    }

    @Override
    public void failed(ChangeLogException cause) {
        add("failed:" + cause.getMessage());
        failure.complete(cause);
    }

    /** A request that reads the snapshot it is handed (in the handler, for the tests' convenience). */
    interface SnapshotReader {
        void read(org.zrm.changelog.CatchupSnapshot snapshot) throws Exception;
    }

    @Override
    public void startCatchup(org.zrm.changelog.CatchupSnapshot snapshot, List<CatchupRequest> requests) {
        catchups.add(requests);
        for (CatchupRequest r : requests) {
            if (r instanceof SnapshotReader reader) {
                try {
                    reader.read(snapshot);
                } catch (Exception e) {
                    r.fail(e);
                }
            }
        }
        add("catchup:" + snapshot.lastWatermark() + "x" + requests.size());
        snapshot.close();
    }

    private void add(String e) {
        events.add(e);
        eventQueue.add(e);
    }

    List<String> snapshot() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }
}
