package org.zrm.backup.vfs.internal;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;

/**
 * What one monitor activation has seen in the backup: the watermarks first observed after the last
 * scheduled one, each with its first observation, and the latest read. Watermarks compare as
 * strings (LexiVersions sort lexicographically), as upstream. Confined to the check thread.
 *
 * <p>Bounded by {@link #MAX_PENDING} entries (at one new watermark per probe that is days of
 * paused cleanup); beyond it the oldest entry is dropped, which can only delay purging, never
 * purge more.
 */
final class ObservedWatermarks {

    static final int MAX_PENDING = 10_000;

    private final TreeMap<String, BackupWatermark> pending = new TreeMap<>();
    private String lastScheduled = "";
    private BackupWatermark latest;

    /**
     * Records a read: it becomes the latest read whatever its value (a backup that appears to
     * regress holds back newer cached watermarks), and is kept if its watermark is newer than the
     * last scheduled one and not yet known (the first observation wins).
     *
     * @return {@code true} if the watermark was new
     */
    boolean observe(BackupWatermark read) {
        latest = read;
        if (read.watermark().compareTo(lastScheduled) <= 0 || pending.containsKey(read.watermark())) {
            return false;
        }
        if (pending.size() >= MAX_PENDING) {
            pending.pollFirstEntry();
        }
        pending.put(read.watermark(), read);
        return true;
    }

    /**
     * @param cutoffMs the latest observation time that has aged enough ({@code now - cleanupDelay})
     * @return the largest watermark that is at most the latest read and was first observed at or
     *     before {@code cutoffMs}
     */
    Optional<String> eligible(long cutoffMs) {
        if (latest == null) {
            return Optional.empty();
        }
        for (Map.Entry<String, BackupWatermark> e : pending.headMap(latest.watermark(), true).descendingMap().entrySet()) {
            if (e.getValue().observedAtMs() <= cutoffMs) {
                return Optional.of(e.getKey());
            }
        }
        return Optional.empty();
    }

    /** Forgets every watermark up to and including {@code watermark}, which was scheduled. */
    void scheduled(String watermark) {
        pending.headMap(watermark, true).clear();
        lastScheduled = watermark;
    }

    String lastScheduled() {
        return lastScheduled;
    }

    BackupWatermark latest() {
        return latest;
    }

    int pendingCount() {
        return pending.size();
    }

    Optional<String> newestPending() {
        return pending.isEmpty() ? Optional.empty() : Optional.of(pending.lastKey());
    }
}
