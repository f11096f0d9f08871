package org.zrm.config;

/**
 * The node's identity, kept in one configuration that every ZRM component reads through DS's
 * multiple configuration PIDs ({@code configurationPid = {NodeIdentity.PID, "<own pid>"}}), so that
 * {@code app.id}, {@code shard.num}, {@code replica.file} and {@code task.id} are set once. DS
 * merges the configurations in order, so a value in a component's own configuration overrides the
 * shared one; a component with {@code configurationPolicy = REQUIRE} is then satisfied only when
 * both configurations exist.
 */
public final class NodeIdentity {

    /** The shared configuration's PID, {@value}; the runtime ships it as {@code org.zrm.identity.cfg}. */
    public static final String PID = "org.zrm.identity";

    /** zero-cache's {@code ZERO_APP_ID}: names the shard's schemas, publications and slots. */
    public static final String APP_ID = "app.id";

    /** zero-cache's {@code ZERO_SHARD_NUM}. */
    public static final String SHARD_NUM = "shard.num";

    /** zero-cache's {@code ZERO_REPLICA_FILE}: the SQLite replica this node builds and keeps. */
    public static final String REPLICA_FILE = "replica.file";

    /** zero-cache's {@code ZERO_TASK_ID}: this node's owner id; empty means a random id per start. */
    public static final String TASK_ID = "task.id";

    private NodeIdentity() {
    }
}
