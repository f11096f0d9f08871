package org.zrm.changesource.pg.internal.sync;

import java.util.List;

/**
 * Rows of one table ready for SQLite, bounded by {@link InitialSyncOptions#bufferRows()} and
 * {@link InitialSyncOptions#bufferBytes()}.
 *
 * @param bytes COPY bytes these rows occupied (for progress and the buffer bound)
 * @param last whether this is the table's final batch
 */
record CopyBatch(String liteTable, List<String> columns, List<Object[]> rows, long bytes, boolean last) {}
