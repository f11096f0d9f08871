/**
 * The change-streamer subscriber protocol, version {@value org.zrm.protocol.subscriber.SubscriberProtocol#PROTOCOL_VERSION}
 * ({@code /replication/v6/changes} and {@code /replication/v6/snapshot}): the
 * {@link org.zrm.protocol.subscriber.Downstream} messages, the {@code {"id":n,"msg":…}}
 * {@link org.zrm.protocol.subscriber.Frame}, the {@code {"ack":n}}
 * {@link org.zrm.protocol.subscriber.Ack} and the {@link org.zrm.protocol.subscriber.SnapshotStatus}.
 * Change data reuses the types of {@link org.zrm.protocol}. The JSON conventions (absent vs null,
 * passthrough members) are those of {@link org.zrm.protocol}.
 *
 * <p>1.1: {@link org.zrm.protocol.subscriber.Frame#prefix(long)} and
 * {@link org.zrm.protocol.subscriber.Frame#END}, the frame around a message, for servers that share
 * one encoding of a message among connections.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.zrm.protocol.subscriber;
