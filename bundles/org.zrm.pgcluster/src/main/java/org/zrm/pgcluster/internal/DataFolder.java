package org.zrm.pgcluster.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;

import org.zrm.pgcluster.PgClusterException;

/**
 * The layout ZRM gives a PostgreSQL data folder.
 *
 * <p>Settings live in {@value #SETTINGS_FILE}, included from {@code postgresql.conf} and rewritten
 * at every start, so a re-used folder always runs with the settings of the current run (a new port,
 * new extra settings) while {@code postgresql.conf} stays as initdb wrote it.
 */
public final class DataFolder {
    /** ZRM's settings, rewritten before every start. */
    public static final String SETTINGS_FILE = "zrm.conf";
    /** The server log, appended to across runs. */
    public static final String LOG_FILE = "server.log";
    // Unix socket paths are limited to 107 bytes (sun_path); ".s.PGSQL.65535.lock" is the longest name.
    private static final int MAX_SOCKET_DIR_LENGTH = 107 - ".s.PGSQL.65535.lock".length() - 1;

    private final Path dir;
    private final OsAccount account;

    /**
     * @param dir the data folder (PGDATA), absolute
     * @param account the owner of everything written into it
     */
    public DataFolder(Path dir, OsAccount account) {
        this.dir = dir.toAbsolutePath().normalize();
        this.account = account;
    }

    /** @return the data folder */
    public Path dir() {
        return dir;
    }

    /** @return the server log file */
    public Path logFile() {
        return dir.resolve(LOG_FILE);
    }

    /** @return whether initdb has already run here (there is a {@code PG_VERSION}) */
    public boolean isInitialized() {
        return Files.isRegularFile(dir.resolve("PG_VERSION"));
    }

    /**
     * Creates the folder (owned by the server's account) if needed, and checks that it is either
     * an initialized cluster or empty, so that initdb never meets someone else's files.
     */
    public void prepare() {
        try {
            if (!Files.exists(dir)) {
                Files.createDirectories(dir);
                account.own(dir);
            }
            if (!isInitialized()) {
                try (Stream<Path> entries = Files.list(dir)) {
                    List<Path> present = entries.limit(5).toList();
                    if (!present.isEmpty()) {
                        throw new PgClusterException(dir + " is neither empty nor a PostgreSQL data folder (no PG_VERSION;"
                                + " it holds e.g. " + present + "). Empty it or choose another folder.");
                    }
                }
                account.own(dir);
            }
        } catch (IOException e) {
            throw new PgClusterException("cannot prepare data folder " + dir + ": " + e.getMessage(), e);
        }
        if (dir.toString().length() > MAX_SOCKET_DIR_LENGTH) {
            throw new PgClusterException("data folder path " + dir + " is longer than " + MAX_SOCKET_DIR_LENGTH
                    + " characters; the server's unix socket would not fit. Choose a shorter path.");
        }
    }

    /** @return the major version recorded by initdb ({@code PG_VERSION}) */
    public int recordedMajorVersion() {
        String text = read(dir.resolve("PG_VERSION")).strip();
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new PgClusterException(dir.resolve("PG_VERSION") + " holds '" + text + "', not a major version", e);
        }
    }

    /**
     * Right after initdb: trust TCP connections from 127.0.0.1 only (normal and replication) and
     * include {@value #SETTINGS_FILE}.
     */
    public void writeBaseConfig() {
        write(dir.resolve("pg_hba.conf"), String.join("\n",
                "# Written by ZRM (org.zrm.pgcluster): local access only, no passwords.",
                "# TYPE  DATABASE     USER  ADDRESS       METHOD",
                "local   all          all                 trust",
                "local   replication  all                 trust",
                "host    all          all   127.0.0.1/32  trust",
                "host    replication  all   127.0.0.1/32  trust",
                ""));
        append(dir.resolve("postgresql.conf"), "\n# ZRM (org.zrm.pgcluster) settings, rewritten at every start.\n"
                + "include_if_exists = '" + SETTINGS_FILE + "'\n");
    }

    /** Rewrites {@value #SETTINGS_FILE} with {@code settings}, in their iteration order. */
    public void writeSettings(Map<String, String> settings) {
        StringBuilder text = new StringBuilder("# Written by ZRM (org.zrm.pgcluster) at every start; edits are lost.\n");
        settings.forEach((name, value) -> text.append(name).append(" = '")
                .append(value.replace("\\", "\\\\").replace("'", "''")).append("'\n"));
        write(dir.resolve(SETTINGS_FILE), text.toString());
    }

    /** @return the pid recorded in {@code postmaster.pid}, if that file exists */
    public OptionalLong recordedPid() {
        return pidFileLine(0).map(s -> OptionalLong.of(Long.parseLong(s.strip()))).orElse(OptionalLong.empty());
    }

    /** @return the port recorded in {@code postmaster.pid}, if that file exists */
    public Optional<String> recordedPort() {
        return pidFileLine(3).map(String::strip);
    }

    /** Removes a {@code postmaster.pid} whose process is known not to be a postmaster. */
    public void removeStalePidFile() {
        try {
            Files.deleteIfExists(dir.resolve("postmaster.pid"));
        } catch (IOException e) {
            throw new PgClusterException("cannot remove stale " + dir.resolve("postmaster.pid") + ": " + e.getMessage(), e);
        }
    }

    /** Deletes the folder and everything in it. */
    public void deleteAll() {
        if (!Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    if (exc != null) {
                        throw exc;
                    }
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new PgClusterException("cannot delete cluster folder " + dir + ": " + e.getMessage(), e);
        }
    }

    private Optional<String> pidFileLine(int index) {
        Path pidFile = dir.resolve("postmaster.pid");
        try {
            List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
            return index < lines.size() ? Optional.of(lines.get(index)) : Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new PgClusterException("cannot read " + pidFile + ": " + e.getMessage(), e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new PgClusterException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private void write(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8);
            account.own(file);
        } catch (IOException e) {
            throw new PgClusterException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private void append(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new PgClusterException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }
}
