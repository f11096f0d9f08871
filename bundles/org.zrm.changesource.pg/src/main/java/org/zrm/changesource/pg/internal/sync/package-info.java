/**
 * Getting a replica: replication-slot creation with an exported snapshot, initial sync (parallel
 * binary or text COPY into the SQLite replica), and the checks and cleanup of an existing
 * replica's upstream row and slots at start-up.
 */
package org.zrm.changesource.pg.internal.sync;
