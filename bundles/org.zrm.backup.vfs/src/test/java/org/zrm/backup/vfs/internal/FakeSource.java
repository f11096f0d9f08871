package org.zrm.backup.vfs.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;

/** An in-process {@link WatermarkSource} that replays scripted reads; the last one repeats. */
final class FakeSource implements WatermarkSource {

    private final Deque<Object> script = new ArrayDeque<>();
    private Object last;
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger closes = new AtomicInteger();

    /** Queues a read that returns {@code w}. */
    FakeSource returns(BackupWatermark w) {
        script.add(w);
        return this;
    }

    /** Queues a read that fails with {@code e}. */
    FakeSource fails(Exception e) {
        script.add(e);
        return this;
    }

    static BackupWatermark watermark(String watermark, long observedAtMs) {
        return new BackupWatermark(watermark, observedAtMs - 1000, "000000000000000" + watermark, 1, observedAtMs);
    }

    @Override
    public synchronized BackupWatermark readWatermark() throws Exception {
        reads.incrementAndGet();
        Object next = script.isEmpty() ? last : script.poll();
        last = next;
        if (next instanceof Exception e) {
            throw e;
        }
        if (next == null) {
            throw new IllegalStateException("no read scripted");
        }
        return (BackupWatermark) next;
    }

    @Override
    public void close() {
        closes.incrementAndGet();
    }
}
