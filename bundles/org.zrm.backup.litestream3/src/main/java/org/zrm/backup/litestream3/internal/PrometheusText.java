package org.zrm.backup.litestream3.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A parser for the Prometheus text exposition format (version 0.0.4), as served by litestream's
 * {@code /metrics}: {@code # HELP} and {@code # TYPE} lines, other comments, and samples
 * {@code name{label="value",...} value [timestamp]}.
 *
 * <p>Malformed input is rejected as a whole, as Prometheus rejects a scrape, rather than skipped
 * line by line: a body cut short in the middle of a sample could otherwise still parse into a
 * wrong value.
 */
final class PrometheusText {

    /** The metric types of the text format. */
    enum Type { COUNTER, GAUGE, HISTOGRAM, SUMMARY, UNTYPED }

    /**
     * One sample.
     *
     * @param name the sample's metric name
     * @param type the type declared by {@code # TYPE} for its family before the sample, else
     *     {@link Type#UNTYPED}
     * @param labels the labels, unescaped, in their order in the text
     * @param value the value; may be NaN or infinite
     * @param timestampMs the optional trailing timestamp (ms since the epoch), or {@code null}
     */
    record Sample(String name, Type type, Map<String, String> labels, double value, Long timestampMs) {
    }

    /** Thrown for text that does not follow the format; the message names the line. */
    static final class FormatException extends Exception {
        private static final long serialVersionUID = 1L;

        FormatException(int lineNumber, String reason, String line) {
            super("invalid Prometheus text at line " + lineNumber + ": " + reason + ": "
                    + (line.length() > 200 ? line.substring(0, 200) + "..." : line));
        }
    }

    private static final Pattern METRIC_NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    // Go's ParseFloat as Prometheus uses it, minus hex floats; Double.parseDouble alone would also
    // accept Java-only forms such as "1d" or "Infinity".
    private static final Pattern DECIMAL = Pattern.compile("[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?");
    private static final Pattern INTEGER = Pattern.compile("[+-]?\\d{1,19}");

    private PrometheusText() {
    }

    /**
     * @param text the whole exposition
     * @return every sample, in text order
     * @throws FormatException if any line is malformed
     */
    static List<Sample> parse(String text) throws FormatException {
        Map<String, Type> types = new HashMap<>();
        List<Sample> samples = new ArrayList<>();
        int lineNumber = 0;
        int start = 0;
        while (start <= text.length()) {
            int end = text.indexOf('\n', start);
            if (end < 0) {
                end = text.length();
            }
            lineNumber++;
            String line = text.substring(start, end);
            start = end + 1;
            if (line.endsWith("\r")) { // tolerated: some exporters end lines with CRLF
                line = line.substring(0, line.length() - 1);
            }
            String trimmed = strip(line);
            if (trimmed.isEmpty()) {
                continue;
            }
            if (trimmed.charAt(0) == '#') {
                parseComment(trimmed, lineNumber, types);
            } else {
                samples.add(new LineParser(trimmed, lineNumber).sample(types));
            }
        }
        return samples;
    }

    private static void parseComment(String line, int lineNumber, Map<String, Type> types) throws FormatException {
        String[] parts = line.substring(1).stripLeading().split("[ \t]+", 3);
        if (parts.length < 2 || !(parts[0].equals("HELP") || parts[0].equals("TYPE"))) {
            return; // an ordinary comment
        }
        if (!METRIC_NAME.matcher(parts[1]).matches()) {
            throw new FormatException(lineNumber, "invalid metric name in " + parts[0], line);
        }
        if (parts[0].equals("HELP")) {
            return; // the help text is not needed; its escapes cannot make the line invalid
        }
        String typeName = parts.length == 3 ? strip(parts[2]) : "";
        Type type;
        try {
            type = Type.valueOf(typeName.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new FormatException(lineNumber, "unknown metric type '" + typeName + "'", line);
        }
        if (!typeName.equals(typeName.toLowerCase(Locale.ROOT))) {
            throw new FormatException(lineNumber, "metric type must be lower case", line);
        }
        if (types.putIfAbsent(parts[1], type) != null) {
            throw new FormatException(lineNumber, "second TYPE line for " + parts[1], line);
        }
    }

    private static Type typeOf(String name, Map<String, Type> types) {
        Type declared = types.get(name);
        if (declared != null) {
            return declared;
        }
        for (String suffix : new String[] {"_bucket", "_sum", "_count"}) {
            if (name.endsWith(suffix)) {
                Type base = types.get(name.substring(0, name.length() - suffix.length()));
                if (base == Type.HISTOGRAM || base == Type.SUMMARY) {
                    return base;
                }
            }
        }
        return Type.UNTYPED;
    }

    private static String strip(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && isBlank(s.charAt(b))) {
            b++;
        }
        while (e > b && isBlank(s.charAt(e - 1))) {
            e--;
        }
        return s.substring(b, e);
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    /** A cursor over one sample line. */
    private static final class LineParser {
        private final String line;
        private final int lineNumber;
        private int pos;

        LineParser(String line, int lineNumber) {
            this.line = line;
            this.lineNumber = lineNumber;
        }

        Sample sample(Map<String, Type> types) throws FormatException {
            String name = name(true);
            skipBlanks();
            Map<String, String> labels = Map.of();
            if (pos < line.length() && line.charAt(pos) == '{') {
                pos++;
                labels = labels();
            }
            skipBlanks();
            String valueText = token();
            if (valueText.isEmpty()) {
                throw error("missing value");
            }
            double value = value(valueText);
            skipBlanks();
            Long timestamp = null;
            if (pos < line.length()) {
                String ts = token();
                if (!INTEGER.matcher(ts).matches()) {
                    throw error("invalid timestamp '" + ts + "'");
                }
                try {
                    timestamp = Long.parseLong(ts);
                } catch (NumberFormatException e) {
                    throw error("timestamp out of range '" + ts + "'");
                }
                skipBlanks();
                if (pos < line.length()) {
                    throw error("unexpected text after the timestamp");
                }
            }
            return new Sample(name, typeOf(name, types), labels, value, timestamp);
        }

        private Map<String, String> labels() throws FormatException {
            Map<String, String> labels = new LinkedHashMap<>();
            while (true) {
                skipBlanks();
                if (pos < line.length() && line.charAt(pos) == '}') {
                    pos++;
                    return Collections.unmodifiableMap(labels);
                }
                String label = name(false);
                skipBlanks();
                expect('=');
                skipBlanks();
                expect('"');
                String value = labelValue();
                if (labels.put(label, value) != null) {
                    throw error("duplicate label '" + label + "'");
                }
                skipBlanks();
                if (pos < line.length() && line.charAt(pos) == ',') {
                    pos++; // a trailing comma before '}' is allowed
                } else if (pos >= line.length() || line.charAt(pos) != '}') {
                    throw error("expected ',' or '}' in the label set");
                }
            }
        }

        private String labelValue() throws FormatException {
            StringBuilder sb = new StringBuilder();
            while (pos < line.length()) {
                char c = line.charAt(pos++);
                if (c == '"') {
                    return sb.toString();
                }
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                if (pos >= line.length()) {
                    break;
                }
                char escaped = line.charAt(pos++);
                switch (escaped) {
                    case '\\' -> sb.append('\\');
                    case '"' -> sb.append('"');
                    case 'n' -> sb.append('\n');
                    default -> throw error("invalid escape '\\" + escaped + "' in a label value");
                }
            }
            throw error("unterminated label value");
        }

        /** A metric name (colons allowed) or a label name. */
        private String name(boolean metric) throws FormatException {
            int begin = pos;
            while (pos < line.length()) {
                char c = line.charAt(pos);
                boolean ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                        || (metric && c == ':') || (pos > begin && c >= '0' && c <= '9');
                if (!ok) {
                    break;
                }
                pos++;
            }
            if (pos == begin) {
                throw error(metric ? "invalid metric name" : "invalid label name");
            }
            return line.substring(begin, pos);
        }

        private double value(String text) throws FormatException {
            String lower = text.toLowerCase(Locale.ROOT);
            switch (lower) {
                case "nan", "+nan", "-nan":
                    return Double.NaN;
                case "inf", "+inf", "infinity", "+infinity":
                    return Double.POSITIVE_INFINITY;
                case "-inf", "-infinity":
                    return Double.NEGATIVE_INFINITY;
                default:
                    break;
            }
            if (!DECIMAL.matcher(text).matches()) {
                throw error("invalid value '" + text + "'");
            }
            return Double.parseDouble(text);
        }

        private String token() {
            int begin = pos;
            while (pos < line.length() && !isBlank(line.charAt(pos))) {
                pos++;
            }
            return line.substring(begin, pos);
        }

        private void expect(char c) throws FormatException {
            if (pos >= line.length() || line.charAt(pos) != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        private void skipBlanks() {
            while (pos < line.length() && isBlank(line.charAt(pos))) {
                pos++;
            }
        }

        private FormatException error(String reason) {
            return new FormatException(lineNumber, reason + " (column " + (pos + 1) + ")", line);
        }
    }
}
