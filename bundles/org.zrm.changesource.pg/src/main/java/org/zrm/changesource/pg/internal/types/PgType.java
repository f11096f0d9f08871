package org.zrm.changesource.pg.internal.types;

import java.util.Objects;
import org.zrm.protocol.PgTypeClass;

/**
 * A row of {@code pg_type} as far as value conversion needs it.
 *
 * @param oid the type's OID
 * @param name {@code typname}, e.g. {@code int4}, {@code _int4}, {@code mood}
 * @param typeClass {@code typtype}; {@code null} if Postgres reports a class we don't model
 * @param category {@code typcategory}, {@code 'A'} for arrays
 * @param elemOid {@code typelem} (0 if none)
 * @param delimiter {@code typdelim}, the array element delimiter ({@code ,} except for {@code box})
 */
public record PgType(int oid, String name, PgTypeClass typeClass, char category, int elemOid, char delimiter) {

    public PgType {
        Objects.requireNonNull(name, "name");
    }

    /**
     * Whether values of this type are arrays. Only true arrays ({@code typcategory = 'A'}) count:
     * types such as {@code name} or {@code point} have a {@code typelem} but a scalar text form.
     */
    public boolean isArray() {
        return category == 'A' && elemOid != 0;
    }
}
