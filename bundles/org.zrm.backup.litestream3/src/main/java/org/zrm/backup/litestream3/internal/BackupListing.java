package org.zrm.backup.litestream3.internal;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Reads the {@code created} column of {@code litestream snapshots} / {@code litestream wal}
 * (v0.3) output: a header row, then one row per snapshot or WAL segment whose last column is an
 * RFC 3339 time, for example
 * <pre>
 * replica  generation        index  size     created
 * s3       1862f44967b3863f  0      4546445  2026-06-10T01:11:32Z
 * </pre>
 */
final class BackupListing {

    private static final Pattern BLANKS = Pattern.compile("\\s+", Pattern.UNICODE_CHARACTER_CLASS);

    private BackupListing() {
    }

    /**
     * Parses one line.
     *
     * @return the created time, or {@code null} for a line that carries none: blank, a single
     *     column, or the header (last column {@code created})
     * @throws DateTimeParseException if the last column is not an RFC 3339 time
     */
    static Instant parseLine(String line) {
        String trimmed = line.strip();
        if (trimmed.isEmpty()) {
            return null;
        }
        String[] cols = BLANKS.split(trimmed);
        String created = cols[cols.length - 1];
        if (cols.length < 2 || created.equals("created")) {
            return null;
        }
        return OffsetDateTime.parse(created, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
    }

    /**
     * Zero's {@code parseBackupCreatedTimes}: the created times of a whole listing, in order.
     * Lines whose last column is not a time are reported to {@code warn} as
     * {@code unexpected line in litestream <command> output: <line>} and skipped.
     */
    static List<Instant> parseBackupCreatedTimes(String command, String output, Consumer<String> warn) {
        List<Instant> times = new ArrayList<>();
        for (String line : output.split("\n", -1)) {
            try {
                Instant t = parseLine(line);
                if (t != null) {
                    times.add(t);
                }
            } catch (DateTimeParseException e) {
                warn.accept(unexpectedLine(command, line));
            }
        }
        return times;
    }

    static String unexpectedLine(String command, String line) {
        return "unexpected line in litestream " + command + " output: " + line;
    }
}
