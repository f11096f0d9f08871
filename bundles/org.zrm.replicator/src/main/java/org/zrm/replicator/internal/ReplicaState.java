package org.zrm.replicator.internal;

/**
 * What the replica says about its position (upstream {@code getSubscriptionState}).
 *
 * @param replicaVersion the watermark of the initial sync that created the replica
 * @param watermark {@code _zero.replicationState.stateVersion}: the commit watermark of the last
 *     transaction applied
 */
record ReplicaState(String replicaVersion, String watermark) {}
