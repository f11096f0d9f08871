package org.zrm.pgcluster.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.zrm.pgcluster.PgClusterException;

/**
 * Where the PostgreSQL server tools live, in this order: an explicit folder, else {@value #ENV_VAR},
 * else the first system folder that holds them ({@link #DEFAULT_DIR}, Debian/Ubuntu's
 * {@code postgresql-15} package), else the PostgreSQL build from Maven Central on the class path,
 * unpacked into the cache ({@link PgDistribution}).
 */
public final class PgBinaries {
    /** Environment variable naming the folder that holds initdb, pg_ctl and postgres. */
    public static final String ENV_VAR = "ZRM_PG_BIN";
    /** Where {@code apt-get install postgresql-15} puts the server tools. */
    public static final Path DEFAULT_DIR = Path.of("/usr/lib/postgresql/15/bin");
    private static final List<String> REQUIRED = List.of("initdb", "pg_ctl", "postgres");

    private final Path dir;
    private final String origin;

    private PgBinaries(Path dir, String origin) {
        this.dir = dir;
        this.origin = origin;
    }

    /** Finds the tools with the system folder {@link #DEFAULT_DIR} and no bundled build. */
    public static PgBinaries locate(Path override, Map<String, String> environment) {
        return locate(override, environment, List.of(DEFAULT_DIR), null, null);
    }

    /**
     * Finds the tools and checks that they are executable. An explicit folder or {@value #ENV_VAR}
     * must hold them; there is no fallback from a folder the user named.
     *
     * @param override an explicit folder, or {@code null}
     * @param environment consulted for {@value #ENV_VAR}
     * @param systemDirs folders searched next, in order
     * @param distribution the bundled build used when no system folder has the tools, or {@code null}
     * @param account the account the server runs as, which must be able to reach an unpacked build
     * @throws PgClusterException naming the missing tools and how to get them
     */
    public static PgBinaries locate(Path override, Map<String, String> environment, List<Path> systemDirs,
            PgDistribution distribution, OsAccount account) {
        String fromEnv = environment.get(ENV_VAR);
        if (override != null) {
            return checked(override, "configured explicitly");
        }
        if (fromEnv != null && !fromEnv.isBlank()) {
            return checked(Path.of(fromEnv.strip()), "from " + ENV_VAR);
        }
        for (Path dir : systemDirs) {
            if (missing(dir).isEmpty()) {
                return new PgBinaries(dir, "system binaries in " + dir);
            }
        }
        String searched = systemDirs.isEmpty() ? "no system folder searched" : "none in " + systemDirs;
        Optional<PgDistribution.Platform> platform = PgDistribution.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        if (distribution != null && platform.isPresent()) {
            Optional<Path> unpacked = distribution.binDir(platform.get());
            if (unpacked.isPresent()) {
                if (account != null) {
                    account.checkCanReach(unpacked.get().resolve("postgres"));
                }
                return new PgBinaries(unpacked.get(), "PostgreSQL " + PgDistribution.VERSION + " from Maven Central ("
                        + platform.get().coordinates() + "), unpacked in " + unpacked.get().getParent() + "; " + searched);
            }
        }
        String bundled = platform.isEmpty()
                ? "ZRM bundles no PostgreSQL build for " + System.getProperty("os.name") + "/" + System.getProperty("os.arch")
                : "the PostgreSQL build from Maven Central (" + platform.get().coordinates() + ") is not on the class path";
        throw new PgClusterException("PostgreSQL 15 server binaries not found (" + searched + ", and " + bundled
                + "). Install them with `apt-get install -y postgresql-15` (as root), or point " + ENV_VAR
                + " at the folder that holds initdb, pg_ctl and postgres.");
    }

    private static PgBinaries checked(Path dir, String origin) {
        List<String> missing = missing(dir);
        if (!missing.isEmpty()) {
            throw new PgClusterException("PostgreSQL 15 server binaries not found: " + String.join(", ", missing)
                    + " missing in " + dir + " (" + origin + "). Install them with `apt-get install -y postgresql-15`"
                    + " (as root), or point " + ENV_VAR + " at the folder that holds initdb, pg_ctl and postgres.");
        }
        return new PgBinaries(dir, origin.equals("configured explicitly") ? dir + " (configured explicitly)" : dir + " (" + origin + ")");
    }

    private static List<String> missing(Path dir) {
        List<String> missing = new ArrayList<>();
        for (String tool : REQUIRED) {
            if (!Files.isExecutable(dir.resolve(tool))) {
                missing.add(tool);
            }
        }
        return missing;
    }

    /** @return the absolute path of one tool in this folder, e.g. {@code tool("pg_ctl")} */
    public String tool(String name) {
        return dir.resolve(name).toAbsolutePath().toString();
    }

    /** @return the folder holding the tools */
    public Path dir() {
        return dir;
    }

    /** @return where the tools came from, for the launch report */
    public String origin() {
        return origin;
    }
}
