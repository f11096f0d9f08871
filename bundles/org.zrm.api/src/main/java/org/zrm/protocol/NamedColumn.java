package org.zrm.protocol;

import java.util.Objects;

/**
 * A column with its name, as used by {@code add-column} and {@code update-column}:
 * {@code {"name":…,"spec":{…}}}.
 *
 * @param name column name
 * @param spec column definition
 * @param extra unknown members
 */
public record NamedColumn(String name, ColumnSpec spec, Passthrough extra) {

    public NamedColumn {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(extra, "extra").requireNoneOf("name", "spec");
    }
}
