package org.zrm.config;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a configured command line (a {@code ZRM_JAVA_OPTS} value, a configured reader command)
 * into words, as a shell does for the simple cases. One algorithm for every such value, so that
 * quoting means the same wherever ZRM reads a command line.
 */
public final class CommandLine {

    private CommandLine() {
    }

    /**
     * Splits on whitespace; single or double quotes group words ({@code sh -c 'a b'} gives three
     * words), without escapes or variable expansion. {@code null} or blank text gives no words.
     *
     * @param text the command line
     * @return the words, in order
     * @throws IllegalArgumentException on an unterminated quote
     */
    public static List<String> split(String text) {
        List<String> words = new ArrayList<>();
        if (text == null) {
            return words;
        }
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (char c : text.toCharArray()) {
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (quote != 0) {
            throw new IllegalArgumentException("unterminated " + quote + " quote in command line: " + text);
        }
        if (inWord) {
            words.add(word.toString());
        }
        return words;
    }
}
