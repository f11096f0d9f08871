package org.zrm.changesource.pg.internal.replication;

import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.changesource.pg.internal.types.PgValueParser;
import org.zrm.changesource.pg.internal.types.PgValueParsers;

/**
 * Column parsers backed by a {@code pg_type} snapshot (spec §7.1, protocol values). An OID the
 * snapshot does not know (a type created after the stream started, e.g. a new enum's array type)
 * triggers one reload, so that new array types get an array parser instead of upstream's raw-text
 * fallback.
 */
public final class CatalogColumnParsers implements ColumnParsers {

    private static final Logger LOG = LoggerFactory.getLogger(CatalogColumnParsers.class);

    private final Supplier<PgTypeCatalog> reload;
    private PgTypeCatalog catalog;

    /**
     * @param catalog the initial snapshot
     * @param reload reads a fresh snapshot (must not use the replication connection); may throw an
     *     unchecked exception, in which case the old snapshot is kept
     */
    public CatalogColumnParsers(PgTypeCatalog catalog, Supplier<PgTypeCatalog> reload) {
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.reload = Objects.requireNonNull(reload, "reload");
    }

    @Override
    public PgValueParser forType(long typeOid) {
        int oid = (int) typeOid;
        if (!catalog.contains(oid)) {
            try {
                catalog = reload.get();
            } catch (RuntimeException e) {
                LOG.warn("cannot reload pg_type for unknown type OID {}; its values stay text: {}", typeOid,
                        e.toString());
            }
        }
        return catalog.parser(oid, PgValueParsers.Target.PROTOCOL);
    }
}
