package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The project speaks for itself: no tracked file names an absolute path of one machine (a
 * checkout folder, a home directory) or points into a folder next to the repository. Such a path
 * works on the machine that wrote it and misleads everyone else.
 */
class RepositoryPathsTest {

    // Assembled from parts so that this file does not match itself.
    private static final Pattern MACHINE_PATH = Pattern.compile(String.join("|",
            "/" + "work/", "/" + "root/", "/" + "home/[a-z][a-z0-9_-]*/", "/" + "Users/", "\\.\\./" + "shared/"));

    @Test
    void noTrackedFileNamesAnAbsolutePathOfOneMachine() throws Exception {
        Path root = repositoryRoot();
        List<String> offending = new ArrayList<>();
        for (String file : trackedFiles(root)) {
            Path p = root.resolve(file);
            if (!Files.isRegularFile(p) || Files.size(p) > 4 << 20) {
                continue;
            }
            byte[] bytes = Files.readAllBytes(p);
            if (isBinary(bytes)) {
                continue;
            }
            String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                Matcher m = MACHINE_PATH.matcher(lines[i]);
                if (m.find()) {
                    offending.add(file + ":" + (i + 1) + ": " + lines[i].strip());
                }
            }
        }
        assertEquals(List.of(), offending, "tracked files naming a machine's absolute path or a folder outside"
                + " the repository; write the path relative to the repository root (or ~ for a cache)");
    }

    private static boolean isBinary(byte[] bytes) {
        for (int i = 0; i < Math.min(bytes.length, 8000); i++) {
            if (bytes[i] == 0) {
                return true;
            }
        }
        return false;
    }

    /** The folder holding {@code cnf/build.bnd} above the test's working directory. */
    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("cnf/build.bnd"))) {
            dir = dir.getParent();
        }
        assumeTrue(dir != null, "not run inside the ZRM source tree");
        return dir;
    }

    private static List<String> trackedFiles(Path root) throws IOException, InterruptedException {
        Process git;
        try {
            git = new ProcessBuilder("git", "ls-files", "-z").directory(root.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            assumeTrue(false, "git is not installed: " + e.getMessage());
            throw e;
        }
        String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean done = git.waitFor(60, TimeUnit.SECONDS);
        // A source tree that is not a git checkout (an unpacked archive) has no tracked files to check.
        assumeTrue(done && git.exitValue() == 0, "not a git checkout");
        List<String> files = new ArrayList<>();
        for (String f : out.split("\0")) {
            if (!f.isEmpty()) {
                files.add(f);
            }
        }
        return files;
    }
}
