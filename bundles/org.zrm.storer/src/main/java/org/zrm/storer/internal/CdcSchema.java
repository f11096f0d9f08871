package org.zrm.storer.internal;

import java.util.Objects;

/**
 * The {@code "<app>_<shard>/cdc"} schema's name and quoted table references. The name contains a
 * slash, so it is always quoted; {@code app.id} is restricted to {@code [a-z0-9_]+}, so quoting
 * cannot be escaped out of.
 */
public final class CdcSchema {

    private final String name;
    private final String quoted;

    public CdcSchema(String name) {
        this.name = Objects.requireNonNull(name, "name");
        this.quoted = quoteIdent(name);
    }

    /** @return the unquoted schema name, e.g. {@code zero_0/cdc} */
    public String name() {
        return name;
    }

    /** @return the quoted schema name */
    public String quoted() {
        return quoted;
    }

    /** @return {@code "<schema>"."<table>"} */
    public String table(String table) {
        return quoted + "." + quoteIdent(table);
    }

    public static String quoteIdent(String ident) {
        return "\"" + ident.replace("\"", "\"\"") + "\"";
    }

    @Override
    public String toString() {
        return name;
    }
}
