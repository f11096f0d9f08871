package org.zrm.changesource.pg.internal.types;

import java.util.ArrayList;
import java.util.List;
import org.zrm.protocol.JsonValues;

/**
 * Parses Postgres array text output ({@code {1,2,{3}}}, {@code {"a b",NULL,"x\"y"}}) into nested
 * lists, converting each element with the element type's parser.
 *
 * <p>DECISION (QUIRK "unquoted NULL array elements"): upstream hands an unquoted {@code NULL} to the
 * element parser as the string {@code "NULL"} ({@code text[]} → "NULL", {@code int[]} → null via
 * NaN, {@code timestamp[]} → stream failure). We map it to {@code null}, which is what binary COPY
 * produces at initial sync; a quoted {@code "NULL"} stays the string. Bounds decorations
 * ({@code [0:2]={…}}) are skipped rather than rejected.
 */
final class PgArrayParser implements PgValueParser {

    private final PgValueParser element;
    private final char delimiter;

    PgArrayParser(PgValueParser element, char delimiter) {
        this.element = element;
        this.delimiter = delimiter;
    }

    @Override
    public Object parse(String text) {
        int start = 0;
        if (text.startsWith("[")) {
            int eq = text.indexOf('=');
            if (eq < 0) {
                throw new PgValueFormatException("Malformed array: " + text);
            }
            start = eq + 1;
        }
        if (start >= text.length() || text.charAt(start) != '{') {
            throw new PgValueFormatException("Malformed array: " + text);
        }
        int[] pos = {start + 1};
        List<Object> result = parseLevel(text, pos);
        if (pos[0] != text.length()) {
            throw new PgValueFormatException("Malformed array (trailing characters): " + text);
        }
        return result;
    }

    /** Parses the elements after an opening brace up to and including its closing brace. */
    private List<Object> parseLevel(String s, int[] pos) {
        List<Object> out = new ArrayList<>();
        int i = pos[0];
        int n = s.length();
        if (i < n && s.charAt(i) == '}') {
            pos[0] = i + 1;
            return List.of();
        }
        while (true) {
            if (i >= n) {
                throw new PgValueFormatException("Malformed array (unterminated): " + s);
            }
            char c = s.charAt(i);
            if (c == '{') {
                int[] inner = {i + 1};
                out.add(parseLevel(s, inner));
                i = inner[0];
            } else if (c == '"') {
                StringBuilder sb = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        throw new PgValueFormatException("Malformed array (unterminated quote): " + s);
                    }
                    char q = s.charAt(i);
                    if (q == '\\' && i + 1 < n) {
                        sb.append(s.charAt(i + 1));
                        i += 2;
                    } else if (q == '"') {
                        i++;
                        break;
                    } else {
                        sb.append(q);
                        i++;
                    }
                }
                out.add(element.parse(sb.toString()));
            } else {
                int j = i;
                while (j < n && s.charAt(j) != delimiter && s.charAt(j) != '}') {
                    j++;
                }
                String raw = s.substring(i, j);
                out.add("NULL".equalsIgnoreCase(raw) ? null : element.parse(raw));
                i = j;
            }
            if (i >= n) {
                throw new PgValueFormatException("Malformed array (unterminated): " + s);
            }
            char sep = s.charAt(i);
            if (sep == '}') {
                pos[0] = i + 1;
                return JsonValues.freezeList(out);
            }
            if (sep != delimiter) {
                throw new PgValueFormatException("Malformed array (unexpected '" + sep + "'): " + s);
            }
            i++;
        }
    }
}
