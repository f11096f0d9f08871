package org.zrm.changesource.pg.internal.setup;

import java.util.Map;

/** A published index; {@code columns} maps column names to {@code ASC}/{@code DESC} in index order. */
public record PublishedIndex(String schema, String tableName, String name, boolean unique, boolean isPrimaryKey,
        boolean isReplicaIdentity, boolean isImmediate, Map<String, String> columns) {}
