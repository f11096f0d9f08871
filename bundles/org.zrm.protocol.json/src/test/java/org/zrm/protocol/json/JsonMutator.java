package org.zrm.protocol.json;

import java.util.Random;

/**
 * Structure-aware mutations of JSON text for the fuzzers: edits that keep most of a document
 * intact, so that decoding gets past the tokenizer and reaches the model checks, plus a few that
 * stress the parser's limits (deep nesting, huge numbers, long strings, broken surrogates).
 */
final class JsonMutator {

    private static final String[] TOKENS = {
        "{", "}", "[", "]", "\"", ",", ":", "0", "-1", "1.5", "1e308", "1e999", "-0", "true", "false", "null",
        "\\", "\\u0000", "\\ud800", "\ud800", "\u0000", " ", "\n", "9007199254740993", "\"\"", "{}", "[]",
        "\"tag\"", "\"insert\"", "\"begin\"", "\"data\"", "\"commit\"", "\"status\"", "\"relation\"",
        "\"id\"", "\"msg\"", "\"ack\"", "\"watermark\"", "\u00e9", "\uD83D\uDE00",
    };

    private JsonMutator() {
    }

    /** Applies {@code count} random mutations chosen by {@code seed} to {@code doc}. */
    static String mutate(String doc, long seed, int count) {
        Random r = new Random(seed);
        StringBuilder s = new StringBuilder(doc);
        for (int i = 0; i < count; i++) {
            mutateOnce(s, r);
        }
        return s.toString();
    }

    private static void mutateOnce(StringBuilder s, Random r) {
        int len = s.length();
        int at = len == 0 ? 0 : r.nextInt(len + 1);
        switch (r.nextInt(12)) {
            case 0 -> { // delete a range
                if (len > 0) {
                    int from = r.nextInt(len);
                    s.delete(from, Math.min(len, from + 1 + r.nextInt(8)));
                }
            }
            case 1 -> s.insert(at, TOKENS[r.nextInt(TOKENS.length)]);
            case 2 -> { // replace one char
                if (len > 0) {
                    s.setCharAt(r.nextInt(len), (char) r.nextInt(0x80));
                }
            }
            case 3 -> { // duplicate a range (repeats members and elements)
                if (len > 0) {
                    int from = r.nextInt(len);
                    int to = Math.min(len, from + 1 + r.nextInt(40));
                    s.insert(to, s.substring(from, to));
                }
            }
            case 4 -> s.setLength(r.nextInt(len + 1)); // truncate
            case 5 -> replaceToken(s, r, "\"" + "x".repeat(1 + r.nextInt(5000)) + "\"");
            case 6 -> replaceToken(s, r, digits(r, 1 + r.nextInt(400)));
            case 7 -> { // deep nesting around a value
                int depth = 1 + r.nextInt(1500);
                s.insert(at, "[".repeat(depth));
                s.append("]".repeat(r.nextBoolean() ? depth : r.nextInt(depth + 1)));
            }
            case 8 -> replaceToken(s, r, TOKENS[r.nextInt(TOKENS.length)]);
            case 9 -> { // flip a bit of one char (control characters, case changes, other digits)
                if (len > 0) {
                    int i = r.nextInt(len);
                    s.setCharAt(i, (char) (s.charAt(i) ^ (1 << r.nextInt(7))));
                }
            }
            case 10 -> s.insert(at, (char) (0xD800 + r.nextInt(0x800))); // lone surrogate
            default -> { // swap two ranges' contents by moving one
                if (len > 2) {
                    int from = r.nextInt(len - 1);
                    int to = from + 1 + r.nextInt(Math.min(20, len - from - 1) + 1);
                    to = Math.min(to, len);
                    String moved = s.substring(from, to);
                    s.delete(from, to);
                    s.insert(r.nextInt(s.length() + 1), moved);
                }
            }
        }
    }

    /** Replaces the scalar token (string, number or literal) around a random position. */
    private static void replaceToken(StringBuilder s, Random r, String replacement) {
        if (s.length() == 0) {
            s.append(replacement);
            return;
        }
        int i = r.nextInt(s.length());
        int from = i;
        while (from > 0 && !isDelimiter(s.charAt(from - 1))) {
            from--;
        }
        int to = i;
        while (to < s.length() && !isDelimiter(s.charAt(to))) {
            to++;
        }
        s.replace(from, to, replacement);
    }

    private static boolean isDelimiter(char c) {
        return c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}';
    }

    private static String digits(Random r, int n) {
        StringBuilder b = new StringBuilder(n + 8);
        if (r.nextBoolean()) {
            b.append('-');
        }
        b.append((char) ('1' + r.nextInt(9)));
        for (int i = 1; i < n; i++) {
            b.append((char) ('0' + r.nextInt(10)));
        }
        switch (r.nextInt(3)) {
            case 0 -> b.append('.').append(r.nextInt(1000));
            case 1 -> b.append('e').append(r.nextBoolean() ? "-" : "").append(r.nextInt(100000));
            default -> { }
        }
        return b.toString();
    }
}
