package org.zrm.replicator.internal;

import org.zrm.protocol.json.ProtocolCodec;

/**
 * Where the replicator subscribes: this runtime's change streamer, or a remote one over Zero's
 * protocol v6. The replicator binds the one its configuration's {@code upstream.target} selects, so
 * the choice is made by configuration (DS), not in code.
 */
public interface ReplicatorUpstream {

    /** Service property naming the kind: {@value #IN_PROCESS} or {@value #REMOTE}. */
    String KIND = "zrm.replicator.upstream";
    String IN_PROCESS = "in-process";
    String REMOTE = "remote";

    /** {@link #IN_PROCESS} or {@link #REMOTE}, for status and logs. */
    String kind();

    /** A client of this upstream; the replicator owns it for the component's lifetime. */
    ChangeStreamClient client(ProtocolCodec codec);
}
