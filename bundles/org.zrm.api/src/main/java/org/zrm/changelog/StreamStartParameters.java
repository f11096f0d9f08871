package org.zrm.changelog;

import java.util.List;
import java.util.Objects;
import org.zrm.protocol.BackfillRequest;

/**
 * Where the next upstream stream starts, read from one consistent snapshot.
 *
 * @param lastWatermark the last stored commit watermark; the stream starts after it
 * @param backfillRequests column backfills that were started but not completed
 */
public record StreamStartParameters(String lastWatermark, List<BackfillRequest> backfillRequests) {

    /** @throws NullPointerException if a component is {@code null} */
    public StreamStartParameters {
        Objects.requireNonNull(lastWatermark, "lastWatermark");
        backfillRequests = List.copyOf(backfillRequests);
    }
}
