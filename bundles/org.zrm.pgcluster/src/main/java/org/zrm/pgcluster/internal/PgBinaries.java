package org.zrm.pgcluster.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.zrm.pgcluster.PgClusterException;

/**
 * Where the PostgreSQL server tools live: an explicit folder, else {@value #ENV_VAR}, else
 * {@link #DEFAULT_DIR} (Debian/Ubuntu's {@code postgresql-15} package).
 */
public final class PgBinaries {
    /** Environment variable naming the folder that holds initdb, pg_ctl and postgres. */
    public static final String ENV_VAR = "ZRM_PG_BIN";
    /** Where {@code apt-get install postgresql-15} puts the server tools. */
    public static final Path DEFAULT_DIR = Path.of("/usr/lib/postgresql/15/bin");
    private static final List<String> REQUIRED = List.of("initdb", "pg_ctl", "postgres");

    private final Path dir;

    private PgBinaries(Path dir) {
        this.dir = dir;
    }

    /**
     * Finds the tools and checks that they are executable.
     *
     * @param override an explicit folder, or {@code null}
     * @param environment consulted for {@value #ENV_VAR}
     * @throws PgClusterException naming the missing tools and the package to install
     */
    public static PgBinaries locate(Path override, Map<String, String> environment) {
        String fromEnv = environment.get(ENV_VAR);
        Path dir;
        String origin;
        if (override != null) {
            dir = override;
            origin = "configured explicitly";
        } else if (fromEnv != null && !fromEnv.isBlank()) {
            dir = Path.of(fromEnv.strip());
            origin = "from " + ENV_VAR;
        } else {
            dir = DEFAULT_DIR;
            origin = "the default; set " + ENV_VAR + " to use another folder";
        }
        List<String> missing = new ArrayList<>();
        for (String tool : REQUIRED) {
            if (!Files.isExecutable(dir.resolve(tool))) {
                missing.add(tool);
            }
        }
        if (!missing.isEmpty()) {
            throw new PgClusterException("PostgreSQL 15 server binaries not found: " + String.join(", ", missing)
                    + " missing in " + dir + " (" + origin + "). Install them with `apt-get install -y postgresql-15`"
                    + " (as root), or point " + ENV_VAR + " at the folder that holds initdb, pg_ctl and postgres.");
        }
        return new PgBinaries(dir);
    }

    /** @return the absolute path of one tool in this folder, e.g. {@code tool("pg_ctl")} */
    public String tool(String name) {
        return dir.resolve(name).toAbsolutePath().toString();
    }

    /** @return the folder holding the tools */
    public Path dir() {
        return dir;
    }
}
