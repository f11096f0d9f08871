package org.zrm.example.jsonl;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The layout of the source's directory, the contract with whatever writes it:
 *
 * <pre>
 * schema.json            the tables (read by {@link DirectorySchema}); its "id" names this directory
 * changes-000001.jsonl   one transaction per line, appended to; a line counts once it ends in \n
 * changes-000002.jsonl   the writer starts the next file only after the previous one is complete
 * acked.json             written by the source: the last position ZRM has stored durably
 * </pre>
 *
 * <p><b>SPI obligation: honour acks.</b> The source writes every acknowledged position to
 * {@code acked.json} ({@code {"id": …, "watermark": …, "file": …, "line": …}}). That is the
 * writer's signal that everything up to there is safe in ZRM's change log: a change file that is
 * not the newest and whose last line is at or before the acked position may be deleted. The
 * source itself never needs such a file again, except for a new initial sync (which needs every
 * file from {@code changes-000001.jsonl}, so a writer that deletes files gives up re-syncs).
 */
public final class ChangeDirectory {

    /** The schema file's name. */
    public static final String SCHEMA = "schema.json";

    /** The acknowledgement file's name. */
    public static final String ACKED = "acked.json";

    private static final Pattern CHANGE_FILE = Pattern.compile("changes-(\\d{6})\\.jsonl");

    private final Path dir;

    /** @param dir the directory */
    public ChangeDirectory(Path dir) {
        this.dir = dir.toAbsolutePath().normalize();
    }

    /** @return the directory */
    public Path path() {
        return dir;
    }

    /**
     * @param file a file number, 1 to {@link Position#MAX_FILE}
     * @return the change file's name, {@code changes-NNNNNN.jsonl}
     */
    public static String fileName(int file) {
        return String.format("changes-%06d.jsonl", file);
    }

    /**
     * @param file a file number
     * @return the change file's path (it may not exist)
     */
    public Path changeFile(int file) {
        return dir.resolve(fileName(file));
    }

    /**
     * The numbers of the change files present, ascending. Other names are ignored.
     *
     * @return the file numbers
     * @throws IOException if the directory cannot be listed
     */
    public List<Integer> changeFiles() throws IOException {
        List<Integer> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Matcher m = CHANGE_FILE.matcher(p.getFileName().toString());
                if (m.matches() && Integer.parseInt(m.group(1)) > 0) {
                    out.add(Integer.parseInt(m.group(1)));
                }
            }
        }
        out.sort(null);
        return out;
    }

    /**
     * Records an acknowledged position for the writer, atomically (a reader sees the old file or
     * the new one, never half of one).
     *
     * @param directoryId the directory's id, so that a writer can tell an old file from a re-created
     *     directory
     * @param acked the position
     * @throws IOException if the file cannot be written
     */
    public void writeAcked(String directoryId, Position acked) throws IOException {
        String json = "{\"id\":" + DirectorySchema.MAPPER.writeValueAsString(directoryId) + ",\"watermark\":\""
                + acked.watermark() + "\",\"file\":" + (acked.file() == 0 ? "null" : "\"" + fileName(acked.file()) + "\"")
                + ",\"line\":" + acked.line() + "}\n";
        Path tmp = dir.resolve(ACKED + ".tmp");
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(ACKED), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
