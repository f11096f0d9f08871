package org.zrm.changesource.pg.internal.setup;

import org.zrm.protocol.PgTypeClass;

/**
 * A published column as reported by the published-schema query.
 *
 * @param elemPgTypeClass the element type class; non-null marks an array (see the QUIRK note in
 *     {@link PublishedSchema})
 * @param characterMaximumLength declared length, or {@code null}
 * @param dflt the default expression, or {@code null}
 */
public record PublishedColumn(String name, int pos, String dataType, PgTypeClass pgTypeClass,
        PgTypeClass elemPgTypeClass, int typeOid, Long characterMaximumLength, boolean notNull, String dflt) {}
