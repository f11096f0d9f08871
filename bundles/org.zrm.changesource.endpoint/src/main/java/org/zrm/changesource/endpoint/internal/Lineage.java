package org.zrm.changesource.endpoint.internal;

import org.zrm.changelog.ChangeLogState;

/**
 * Whether a resuming client can be served from the change streamer. Its replica is usable iff it
 * was created from a snapshot of the streamer's current lineage, i.e. its replica version is at or
 * after the streamer's replica version, and its last watermark is not older than that either (a
 * watermark before the replica version belongs to an earlier lineage). Whether the change log
 * still holds everything after the watermark is decided by the streamer itself when subscribing
 * (it answers a purged watermark with an error, which the connection turns into reset-required).
 */
final class Lineage {

    private Lineage() {
    }

    /**
     * @param request a resuming request
     * @param state the streamer's replica version and oldest servable watermark
     * @return {@code null} if servable, else the reset-required message
     */
    static String check(EndpointRequest request, ChangeLogState state) {
        String served = state.replicaVersion();
        if (request.replicaVersion().compareTo(served) < 0) {
            return "replicaVersion " + request.replicaVersion() + " predates the served replica version " + served
                    + " (the upstream was re-synced); a new initial sync is required";
        }
        if (request.lastWatermark().compareTo(served) < 0) {
            return "lastWatermark " + request.lastWatermark() + " predates the served replica version " + served
                    + "; a new initial sync is required";
        }
        if (request.lastWatermark().compareTo(request.replicaVersion()) < 0) {
            return "lastWatermark " + request.lastWatermark() + " is before replicaVersion " + request.replicaVersion();
        }
        return null;
    }
}
