/**
 * Change-source SPI: where the change streamer gets its ordered stream of committed transactions.
 *
 * <p>A {@link org.zrm.changesource.ChangeSource} is an OSGi service registered with the
 * {@link org.zrm.changesource.ChangeSource#TYPE} property. ZRM ships a Postgres logical-replication
 * source ({@code pg}) and a client for Zero's custom change-source WebSocket protocol
 * ({@code custom}); third parties may register their own. The change streamer pulls
 * {@link org.zrm.protocol.ChangeStreamMessage}s from a {@link org.zrm.changesource.ChangeStream} on
 * its own thread, which gives natural back-pressure, and acknowledges positions only after it has
 * stored them durably.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.changesource;
