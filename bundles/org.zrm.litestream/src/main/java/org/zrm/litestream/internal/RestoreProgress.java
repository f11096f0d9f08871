package org.zrm.litestream.internal;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.secret.Secrets;

/** The restore at start-up as {@code /status} shows it: running (bytes, elapsed), then its outcome and why. */
final class RestoreProgress {

    private static final Logger LOG = LoggerFactory.getLogger(RestoreProgress.class);

    private volatile String state = "NOT_RUN";
    private volatile long bytes;
    private volatile long elapsedMs;
    private volatile String reason;

    /** @return whether a usable replica was restored */
    boolean run(LitestreamRestore restore, LitestreamRestore.Constraints constraints) throws InterruptedException {
        state = "RUNNING";
        try {
            LitestreamRestore.Result r = restore.restore(constraints, p -> {
                bytes = p.bytes();
                elapsedMs = p.elapsed().toMillis();
            });
            bytes = r.bytes();
            elapsedMs = r.elapsed().toMillis();
            reason = r.reason();
            state = r.outcome().name();
            switch (r.outcome()) {
                case RESTORED -> LOG.info("litestream: restore: {}; continuing from the restored watermark", r.reason());
                case EXISTS -> LOG.info("litestream: no restore: {}", r.reason());
                case NO_BACKUP, UNUSABLE -> LOG.warn("litestream: {}; the replica will be initial-synced", r.reason());
            }
            return r.outcome() == LitestreamRestore.Outcome.RESTORED;
        } catch (IOException e) {
            state = "FAILED";
            reason = Secrets.maskUrls(e.getMessage());
            // Upstream re-syncs after a failed restore too; the reason stays visible in the status.
            LOG.error("litestream: error restoring the backup; the replica will be initial-synced: {}", reason);
            return false;
        } catch (InterruptedException e) {
            state = "CANCELLED";
            throw e;
        }
    }

    Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", state);
        m.put("bytes", bytes);
        m.put("elapsedMs", elapsedMs);
        m.put("reason", reason);
        return m;
    }
}
