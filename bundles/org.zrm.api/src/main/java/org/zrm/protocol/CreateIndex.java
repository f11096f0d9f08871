package org.zrm.protocol;

import java.util.Objects;

/**
 * Index creation: {@code {"tag":"create-index","spec":{…}}}.
 *
 * @param spec the index
 * @param extra unknown members
 */
public record CreateIndex(IndexSpec spec, Passthrough extra) implements SchemaChange {

    /** Wire tag. */
    public static final String TAG = "create-index";

    public CreateIndex {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(extra, "extra").requireNoneOf("tag", "spec");
    }

    @Override
    public String tag() {
        return TAG;
    }
}
