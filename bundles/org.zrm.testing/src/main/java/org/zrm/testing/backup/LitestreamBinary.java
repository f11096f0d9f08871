package org.zrm.testing.backup;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The real litestream v0.3.13 for tests: {@code $ZRM_LITESTREAM_EXECUTABLE} if set, else
 * {@code ~/.cache/zrm/litestream-0.3.13/litestream}, else fetched into that cache with
 * {@code npm pack @flydotio/litestream-linux-x64@1.0.1} (the only registry that ships it; the
 * tarball holds {@code package/litestream}).
 */
public final class LitestreamBinary {

    static final String VERSION = "v0.3.13";
    static final String NPM_PACKAGE = "@flydotio/litestream-linux-x64@1.0.1";
    static final String ENV = "ZRM_LITESTREAM_EXECUTABLE";

    private LitestreamBinary() {
    }

    public static Path cached() {
        return Path.of(System.getProperty("user.home"), ".cache", "zrm", "litestream-0.3.13", "litestream");
    }

    /** @return a verified litestream v0.3.13 executable; fails the test with what to do otherwise */
    public static synchronized Path locate() throws Exception {
        String fromEnv = System.getenv(ENV);
        Path bin;
        if (fromEnv != null && !fromEnv.isBlank()) {
            bin = Path.of(fromEnv.strip());
            if (!Files.isExecutable(bin)) {
                throw new IllegalStateException(ENV + "=" + fromEnv + " is not an executable file");
            }
        } else {
            bin = cached();
            if (!Files.isExecutable(bin)) {
                fetch(bin);
            }
        }
        String version = run(List.of(bin.toString(), "version"), bin.getParent(), 30).strip();
        if (!version.startsWith(VERSION)) {
            throw new IllegalStateException(bin + " reports version '" + version + "', expected " + VERSION);
        }
        return bin;
    }

    private static void fetch(Path target) throws Exception {
        Path npm = onPath("npm");
        if (npm == null) {
            throw new IllegalStateException("litestream " + VERSION + " is needed by the real-binary tests and is not at "
                    + target + ", and npm is not on the PATH to fetch it. Install npm (the npm registry must be"
                    + " reachable), or run `npm pack " + NPM_PACKAGE + "`, extract package/litestream to " + target
                    + ", or set " + ENV + " to a litestream " + VERSION + " executable.");
        }
        if (!"linux".equalsIgnoreCase(System.getProperty("os.name"))
                || !List.of("amd64", "x86_64").contains(System.getProperty("os.arch"))) {
            throw new IllegalStateException(NPM_PACKAGE + " is a linux-x64 build; set " + ENV
                    + " to a litestream " + VERSION + " for " + System.getProperty("os.name") + "/"
                    + System.getProperty("os.arch"));
        }
        Path tmp = Files.createTempDirectory("zrm-litestream-pack");
        try {
            run(List.of(npm.toString(), "pack", "--silent", NPM_PACKAGE), tmp, 300);
            Path tgz;
            try (DirectoryStream<Path> tgzs = Files.newDirectoryStream(tmp, "*.tgz")) {
                List<Path> found = new ArrayList<>();
                tgzs.forEach(found::add);
                if (found.size() != 1) {
                    throw new IllegalStateException("npm pack " + NPM_PACKAGE + " produced " + found + " in " + tmp);
                }
                tgz = found.get(0);
            }
            run(List.of("tar", "-xzf", tgz.toString(), "-C", tmp.toString(), "package/litestream"), tmp, 120);
            Files.createDirectories(target.getParent());
            // Copy under a unique name and rename, so concurrent test JVMs never see a partial file.
            Path part = target.resolveSibling("litestream.part-" + ProcessHandle.current().pid());
            Files.copy(tmp.resolve("package/litestream"), part, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(part, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            try (Stream<Path> files = Files.walk(tmp)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static Path onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String d : path.split(File.pathSeparator)) {
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /** Runs a command to completion (bounded) and returns its output; fails with the output otherwise. */
    private static String run(List<String> command, Path dir, long timeoutSeconds) throws Exception {
        Path log = Files.createTempFile("zrm-litestream-fixture", ".log");
        try {
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeoutSeconds
                        + " s: " + Files.readString(log, StandardCharsets.UTF_8));
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " exited with " + p.exitValue() + ": " + out);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
