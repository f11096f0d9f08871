/**
 * The wire layer: one logical replication connection per stream. {@code ReplicationStream} runs
 * {@code START_REPLICATION} with pgoutput over pgjdbc's copy-both protocol on its own pump
 * thread, parses each CopyData message into a {@code PgOutputMessage} (values through the column
 * parsers of {@code types}), answers keepalives, sends standby status updates (acks) and enforces
 * inbound liveness. It knows nothing of Zero's protocol: it hands raw pgoutput messages to a
 * {@code StreamHandler}, which is {@code stream}'s job.
 */
package org.zrm.changesource.pg.internal.replication;
