package org.zrm.shell.internal;

import java.util.ArrayList;
import java.util.List;

/** A text table with a header row, columns padded to their widest cell. */
final class Table {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    Table row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("expected " + header.size() + " cells, got " + cells.length);
        }
        List<String> row = new ArrayList<>();
        for (Object c : cells) {
            row.add(c == null ? "-" : c.toString());
        }
        rows.add(row);
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    String render() {
        int[] widths = new int[header.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = header.get(i).length();
            for (List<String> r : rows) {
                widths[i] = Math.max(widths[i], r.get(i).length());
            }
        }
        StringBuilder out = new StringBuilder();
        line(out, header, widths);
        for (List<String> r : rows) {
            line(out, r, widths);
        }
        return out.toString();
    }

    private static void line(StringBuilder out, List<String> cells, int[] widths) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                l.append("  ");
            }
            l.append(cells.get(i));
            if (i < cells.size() - 1) {
                l.append(" ".repeat(widths[i] - cells.get(i).length()));
            }
        }
        out.append(l).append('\n');
    }
}
