/**
 * The protocol layer of a stream: turns pgoutput messages into Zero's change-source messages
 * ({@code ChangeMaker}, with the DDL and Relation handlers for schema changes), decides which
 * watermarks may be acked upstream ({@code Acker}), adds lag reports, and buffers the result for
 * the change streamer in a bounded {@code MessageBuffer} ({@code PgChangeStream} is the
 * {@code ChangeStream} a consumer sees). Split from {@code replication} so that the conversion
 * rules can be tested without a server and the wire code without Zero's protocol.
 */
package org.zrm.changesource.pg.internal.stream;
