package org.zrm.protocol;

import java.util.Objects;

/**
 * A column definition ({@code db/specs.ts columnSpec}):
 * {@code {"pos":1,"dataType":"int8","pgTypeClass":"b","elemPgTypeClass":null,"characterMaximumLength":null,"notNull":true,"dflt":null}}.
 * The Postgres source adds {@code typeOID} (between {@code elemPgTypeClass} and
 * {@code characterMaximumLength}), kept in {@link #extra()}.
 *
 * @param pos column position (Postgres attnum)
 * @param dataType type name
 * @param pgTypeClass type class; {@code null} = absent
 * @param elemPgTypeClass element type class of array columns; absent, null or a value
 * @param characterMaximumLength absent, null or a value
 * @param notNull absent, null or a value
 * @param dflt default expression; absent, null or a value
 * @param extra unknown members
 */
public record ColumnSpec(
        long pos,
        String dataType,
        PgTypeClass pgTypeClass,
        Maybe<PgTypeClass> elemPgTypeClass,
        Maybe<Long> characterMaximumLength,
        Maybe<Boolean> notNull,
        Maybe<String> dflt,
        Passthrough extra) {

    public ColumnSpec {
        Objects.requireNonNull(dataType, "dataType");
        Objects.requireNonNull(elemPgTypeClass, "elemPgTypeClass");
        Objects.requireNonNull(characterMaximumLength, "characterMaximumLength");
        Objects.requireNonNull(notNull, "notNull");
        Objects.requireNonNull(dflt, "dflt");
        Objects.requireNonNull(extra, "extra").requireNoneOf("pos", "dataType", "pgTypeClass",
                "elemPgTypeClass", "characterMaximumLength", "notNull", "dflt");
    }
}
