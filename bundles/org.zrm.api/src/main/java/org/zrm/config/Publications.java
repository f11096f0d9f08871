package org.zrm.config;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads a configured publication list ({@code ZERO_APP_PUBLICATIONS}, {@code app.publications}) the
 * way zero-cache reads its array options: every value may itself be comma-separated, and blank
 * entries are dropped. One reading for every component that takes the list, so that the pg source,
 * the custom source and the custom endpoint always agree on what was configured.
 */
public final class Publications {

    private Publications() {
    }

    /**
     * @param values the configured values, possibly {@code null}
     * @return the publication names in configured order, trimmed, without blanks
     */
    public static List<String> split(String[] values) {
        List<String> out = new ArrayList<>();
        if (values == null) {
            return out;
        }
        for (String v : values) {
            for (String p : v.split(",")) {
                if (!p.isBlank()) {
                    out.add(p.trim());
                }
            }
        }
        return out;
    }
}
