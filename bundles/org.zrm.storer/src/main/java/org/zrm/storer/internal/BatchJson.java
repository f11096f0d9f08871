package org.zrm.storer.internal;

import java.util.List;
import org.zrm.changelog.ChangeLogEntry;

/**
 * Writes a batch of rows as the single JSON parameter of the {@code json_to_recordset} INSERT:
 * {@code [{"watermark":"…","precommit":null,"pos":0,"change":"<change JSON as a string>"},…]}.
 * The change text is embedded as a JSON <em>string</em> (and cast back with {@code ::json} in
 * SQL), so Postgres stores it byte for byte.
 */
final class BatchJson {

    private BatchJson() {
    }

    static String encode(List<ChangeLogEntry> rows) {
        int size = 2;
        for (ChangeLogEntry row : rows) {
            size += row.change().length() + row.watermark().length() * 2 + 80;
        }
        StringBuilder b = new StringBuilder(size + (size >> 4));
        b.append('[');
        for (int i = 0; i < rows.size(); i++) {
            ChangeLogEntry row = rows.get(i);
            if (i > 0) {
                b.append(',');
            }
            b.append("{\"watermark\":");
            string(b, row.watermark());
            b.append(",\"precommit\":");
            String precommit = precommit(row);
            if (precommit == null) {
                b.append("null");
            } else {
                string(b, precommit);
            }
            b.append(",\"pos\":").append(row.pos()).append(",\"change\":");
            string(b, row.change());
            b.append('}');
        }
        return b.append(']').toString();
    }

    /** The commit row's precommit defaults to its watermark (all rows carry the commit watermark). */
    static String precommit(ChangeLogEntry row) {
        if (!"commit".equals(row.tag())) {
            return null;
        }
        return row.precommit() != null ? row.precommit() : row.watermark();
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static void string(StringBuilder b, String s) {
        b.append('"');
        int len = s.length();
        int start = 0;
        for (int i = 0; i < len; i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\' || c < 0x20) {
                b.append(s, start, i);
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    default -> b.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                }
                start = i + 1;
            }
        }
        b.append(s, start, len).append('"');
    }
}
