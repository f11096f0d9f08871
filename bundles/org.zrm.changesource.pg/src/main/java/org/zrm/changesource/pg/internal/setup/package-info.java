/**
 * The upstream shard: its schema, tables, publications, event-trigger functions and migrations
 * (zero-cache's exact SQL, so both can share an upstream), the published-schema query and its
 * model, and the validation of published tables.
 */
package org.zrm.changesource.pg.internal.setup;
