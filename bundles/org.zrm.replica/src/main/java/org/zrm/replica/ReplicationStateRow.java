package org.zrm.replica;

import java.util.OptionalLong;

/**
 * The single row of a replica's {@code _zero.replicationState}, as stored, read by
 * {@link ReplicaStateReader#replicationState}. It is given raw (with the storage class of
 * {@code stateVersion}) because its readers judge it differently: the replica backup monitor
 * refuses anything but a well-formed text version, the lag gauge only needs the write time.
 *
 * @param stateVersion {@code stateVersion} as text ({@code null} if SQL NULL): the commit watermark
 *     of the last transaction applied
 * @param stateVersionStorageClass SQLite's {@code typeof(stateVersion)}: {@code text} unless the
 *     file was written by something else
 * @param writeTimeMs {@code writeTimeMs}, ms since the epoch of the last write; empty if NULL
 */
public record ReplicationStateRow(String stateVersion, String stateVersionStorageClass, OptionalLong writeTimeMs) {
}
