package org.zrm.replicator.internal;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.protocol.json.ProtocolCodec;

/**
 * This runtime's {@link ChangeStreamer} as the replicator's upstream. Satisfied only while the
 * streamer is registered, so a replicator that selects it is unsatisfied, and says so in
 * {@code /status}, until the streamer is up; a restarted streamer restarts the replicator.
 */
@Component(service = ReplicatorUpstream.class, configurationPolicy = ConfigurationPolicy.IGNORE,
        property = ReplicatorUpstream.KIND + "=" + ReplicatorUpstream.IN_PROCESS)
public final class InProcessUpstream implements ReplicatorUpstream {

    private final ChangeStreamer streamer;

    @Activate
    public InProcessUpstream(@Reference ChangeStreamer streamer) {
        this.streamer = streamer;
    }

    @Override
    public String kind() {
        return IN_PROCESS;
    }

    @Override
    public ChangeStreamClient client(ProtocolCodec codec) {
        return new InProcessChangeStreamClient(streamer);
    }
}
