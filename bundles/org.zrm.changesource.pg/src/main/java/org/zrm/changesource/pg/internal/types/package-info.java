/**
 * Postgres values to protocol values: the text parsers the stream and text COPY use, the binary
 * COPY decoders, and the {@code pg_type} catalog that picks one per column type.
 */
package org.zrm.changesource.pg.internal.types;
