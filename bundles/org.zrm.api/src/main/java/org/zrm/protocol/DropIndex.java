package org.zrm.protocol;

import java.util.Objects;

/**
 * Index removal: {@code {"tag":"drop-index","id":{…}}}.
 *
 * @param id dropped index
 * @param extra unknown members
 */
public record DropIndex(Identifier id, Passthrough extra) implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "drop-index";

    public DropIndex {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "id");
    }

    @Override
    public String tag() {
        return TAG;
    }
}
