package org.zrm.protocol;

import java.util.Objects;

/**
 * A schema-qualified name: {@code {"schema":…,"name":…}}.
 *
 * @param schema schema name
 * @param name object name
 * @param extra unknown members
 */
public record Identifier(String schema, String name, Passthrough extra) {

    public Identifier {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(extra, "extra").requireNoneOf("schema", "name");
    }

    /** An identifier without unknown members. */
    public Identifier(String schema, String name) {
        this(schema, name, Passthrough.NONE);
    }
}
