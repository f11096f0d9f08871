package org.zrm.changestreamer.http.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of the change-streamer WebSocket endpoints (PID
 * {@value ReplicationServletComponent#PID}); optional, every value has a default.
 */
@ObjectClassDefinition(name = "ZRM change-streamer HTTP",
        description = "WebSocket endpoints /replication/v{1..6}/changes and /snapshot served to "
                + "view-syncers and replicators.")
@interface ChangeStreamerHttpConfig {

    @AttributeDefinition(name = "Ping interval (ms)",
            description = "A WebSocket ping is sent this often; a connection that sent neither a pong nor a "
                    + "message during one interval is terminated. Zero clients terminate a connection that "
                    + "is silent for 33 s, so keep it at or below 30000.", min = "1")
    long ping_intervalMs() default Settings.DEFAULT_PING_INTERVAL_MS;

    @AttributeDefinition(name = "Maximum unacknowledged characters per connection",
            description = "The sender stops taking messages while the frames sent to a client but not yet "
                    + "acknowledged exceed this many characters. A single larger frame is still sent when "
                    + "nothing else is outstanding.", min = "1")
    long send_maxUnackedChars() default Settings.DEFAULT_MAX_UNACKED_CHARS;

    @AttributeDefinition(name = "Maximum queued characters per connection",
            description = "The sender stops while the frames queued for the socket but not yet written to the "
                    + "socket exceed this many characters.", min = "1")
    long send_maxQueuedChars() default Settings.DEFAULT_MAX_QUEUED_CHARS;

    @AttributeDefinition(name = "Sender threads",
            description = "Threads that send the frames of every /changes connection; a connection whose client "
                    + "is slow or whose window is full holds none of them. 0: one per available processor.",
            min = "0", max = "256")
    int send_threads() default 0;

    @AttributeDefinition(name = "Maximum incoming message size (bytes)",
            description = "Clients only send acknowledgements of a few bytes; a larger text message closes "
                    + "its connection with code 1009.", min = "64")
    long receive_maxMessageBytes() default Settings.DEFAULT_MAX_INCOMING_MESSAGE_BYTES;

    @AttributeDefinition(name = "Allowed clients", required = false,
            description = "Comma-separated IP addresses or CIDRs (IPv4 or IPv6) that may open replication connections"
                    + " (ZRM_CHANGE_STREAMER_ALLOW); others get 403 before the upgrade. Empty: everyone.")
    String allow() default "";
}
