/**
 * Backfills: columns and tables that must be copied from a snapshot because the live stream alone
 * cannot fill them (a table joining a publication with rows, a column whose default SQLite cannot
 * express, a changed published column). The manager keeps the required backfills and schedules
 * them beside the live stream; a streamer reads one request from a temporary snapshot slot.
 */
package org.zrm.changesource.pg.internal.backfill;
