package org.zrm.changelog;

import java.util.List;
import org.zrm.changelog.CatchupSnapshot;

/**
 * Serves catch-up requests from a snapshot the storer queue has pinned between two database
 * transactions (spec §1.4 {@code #startCatchup}): the snapshot holds exactly the transactions
 * stored before the requests' position in the stream, and the live stream delivers the rest.
 */
@FunctionalInterface
public interface CatchupHandler {

    /**
     * Starts catching the requests up. Called on the writer thread, which does not store anything
     * until this returns: hand the work to another thread and return at once.
     *
     * @param snapshot the pinned snapshot; the handler owns it from now on and must close it when
     *     every request is served (also when it throws)
     * @param requests the requests, in queue order; never empty
     */
    void startCatchup(CatchupSnapshot snapshot, List<CatchupRequest> requests);
}
