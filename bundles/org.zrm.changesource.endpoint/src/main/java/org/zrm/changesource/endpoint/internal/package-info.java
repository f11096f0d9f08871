/**
 * Zero's custom change-source protocol served at {@code /changes/v0/stream}, so that a stock
 * zero-cache ({@code ZERO_UPSTREAM_TYPE=custom}) or another ZRM replicates from this runtime.
 *
 * <p>Design: the endpoint serves <b>what the change streamer streams</b>. A resuming client
 * becomes a v6 serving subscription of the {@link org.zrm.changestreamer.ChangeStreamer} from its
 * {@code lastWatermark}; a fresh client first gets a snapshot of the replica file
 * ({@link org.zrm.changesource.endpoint.internal.ReplicaSnapshot}) and then continues from its
 * watermark. The endpoint never opens a second stream on a {@code ChangeSource}: that would
 * compete with the streamer for the one replication slot, and it would bypass the change log that
 * makes resuming and purging consistent. So whichever change source the runtime selected (pg or a
 * third-party bundle) is what clients receive.
 *
 * <p>Private package.
 */
package org.zrm.changesource.endpoint.internal;
