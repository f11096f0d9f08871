package org.zrm.changestreamer.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of PID {@value ChangeStreamerComponent#PID}; names follow zero-cache's options. */
@ObjectClassDefinition(pid = "org.zrm.changestreamer", name = "ZRM change streamer",
        description = "Forwards changes from the change source to subscribers, stores them in the change log and acks them upstream")
public @interface ChangeStreamerConfig {

    @AttributeDefinition(name = "App ID", description = "Application id (ZERO_APP_ID), for logs")
    String app_id() default "zero";

    @AttributeDefinition(name = "Shard number", min = "0", description = "Shard number (ZERO_SHARD_NUM), for logs")
    int shard_num() default 0;

    @AttributeDefinition(name = "Replica file", description = "Local replica file (ZERO_REPLICA_FILE)")
    String replica_file() default "zero.db";

    @AttributeDefinition(name = "Task ID", required = false,
            description = "This node's id, the change log's owner (ZERO_TASK_ID); empty = a random id per activation")
    String task_id() default "";

    @AttributeDefinition(name = "Change source",
            description = "DS target filter of the change source to stream from; the shipped configuration derives it"
                    + " from ZERO_UPSTREAM_TYPE: (zrm.changesource.type=<type>). No matching service: the selection"
                    + " component is unsatisfied and /status names this filter")
    String changeSource_target() default ChangeStreamerComponent.DEFAULT_SOURCE_TARGET;

    @AttributeDefinition(name = "Change source grace", min = "0",
            description = "How long the stream loop waits for a matching change source before it logs one error naming"
                    + " the filter and the registered types (the runtime is unhealthy meanwhile)")
    long changeSource_graceMs() default 10_000;

    @AttributeDefinition(name = "Auto reset",
            description = "Re-sync the replica automatically, in process, when it cannot continue its lineage (a"
                    + " reset-required message from the source, a backup behind the change log, a lost replication slot);"
                    + " when off, such a node stops with an error (ZERO_AUTO_RESET, default true)")
    boolean autoReset() default true;

    @AttributeDefinition(name = "Exit on terminal stop",
            description = "When the change streamer stops for good (ownership taken by another node, the replication"
                    + " slot missing, a required re-sync with autoReset off, the change log dropped, an unrecoverable"
                    + " error), stop the runtime: the launcher exits with status 1 printing the reason, for an"
                    + " orchestrator to restart the node, as zero-cache does. Off: the node stays up and unhealthy")
    boolean exitOnTerminalStop() default true;

    @AttributeDefinition(name = "Backup URL", required = false,
            description = "ZERO_LITESTREAM_BACKUP_URL: when set, a missing replica file is restored from the backup"
                    + " before the change source starts (which would otherwise re-sync it to a new replica version)")
    String litestream_backupURL() default "";

    @AttributeDefinition(name = "Restorer wait (ms)", min = "0",
            description = "With a backup URL, how long the start waits for the replica restorer (bundle"
                    + " org.zrm.litestream) to appear before it goes on without a restore")
    long restore_awaitRestorerMs() default 30_000;

    @AttributeDefinition(name = "Owner address", required = false,
            description = "host:port subscribers use to reach this streamer, published in replicationState.ownerAddress"
                    + " (ZERO_CHANGE_STREAMER_ADDRESS); empty = <hostname>:<change-streamer port>")
    String changeStreamer_address() default "";

    @AttributeDefinition(name = "Protocol", description = "ws or wss; wss is prefixed to the published address"
            + " (ZERO_CHANGE_STREAMER_PROTOCOL)")
    String changeStreamer_protocol() default "ws";

    @AttributeDefinition(name = "Start-up delay (ms)", min = "0",
            description = "How long to wait before taking over the change log unless a serving subscriber connects first"
                    + " (ZERO_CHANGE_STREAMER_STARTUP_DELAY_MS)")
    long changeStreamer_startupDelayMs() default 15_000;

    @AttributeDefinition(name = "Flow control consensus padding (s)",
            description = "After a majority of subscribers consumed a flushed message, wait at most this long for the rest;"
                    + " negative = wait for all (ZERO_CHANGE_STREAMER_FLOW_CONTROL_CONSENSUS_PADDING_SECONDS)")
    double changeStreamer_flowControlConsensusPaddingSeconds() default 1;

    @AttributeDefinition(name = "Subscriber buffer bound (bytes)", min = "131072",
            description = "Unconsumed bytes one subscriber may hold, so that it cannot exhaust the heap. Beyond it a"
                    + " live subscriber is disconnected (it reconnects and catches up from the change log); one still"
                    + " catching up that keeps reading drops the live changes it kept and is caught up again from the"
                    + " change log without a disconnect. At least 131072 (twice the 64 KiB flow-control flush threshold)")
    long changeStreamer_subscriberMaxBufferedBytes() default StreamerSettings.DEFAULT_SUBSCRIBER_MAX_BUFFERED_BYTES;

    @AttributeDefinition(name = "Catch-up threads", min = "1",
            description = "Threads catching subscribers up from the change log (each holds one change-db connection)")
    int changeStreamer_catchupThreads() default 4;

    @AttributeDefinition(name = "Flow-control window", min = "1", max = "1024",
            description = "Flushes of 64 KiB that may be forwarded before the oldest is settled by the subscribers"
                    + " (consumed by all, or by a majority plus the padding); 1 = upstream's lock-step. Capped so that"
                    + " a subscriber that keeps up never exceeds its buffer bound")
    int changeStreamer_flowControlWindow() default StreamerSettings.DEFAULT_FLOW_CONTROL_WINDOW;

    @AttributeDefinition(name = "Purge cycle delay (ms)", min = "1",
            description = "How long after a backup monitor confirms a watermark the purge cycle runs, and the retry"
                    + " period while it cannot purge yet (zero-cache: 30000, three times the longest reconnect"
                    + " back-off, so recently disconnected subscribers are counted)")
    long changeStreamer_cleanupDelayMs() default 30_000;
}
