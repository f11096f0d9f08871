package org.zrm.launcher;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Seeds a new (empty) configuration folder with the shipped defaults, {@code runtime/conf/*.cfg}.
 * A folder that holds anything is the operator's and is left alone, so edits and deletions survive
 * upgrades, with one exception: a file every component requires ({@link #REQUIRED}) that a folder
 * from an older version lacks is added, because without it nothing starts; its values are only
 * defaults, which the components' own files override.
 */
public final class ConfigSeeder {

    /** Shipped files without which no pipeline component is satisfied. */
    static final List<String> REQUIRED = List.of("org.zrm.identity.cfg");

    /**
     * Copies the shipped {@code .cfg} files into {@code configDir} if it is empty.
     *
     * @return the files copied (empty if the folder was not empty or nothing is shipped)
     */
    public List<Path> seed(Path shippedDir, Path configDir) {
        List<Path> copied = new ArrayList<>();
        try {
            if (!Files.isDirectory(shippedDir)) {
                return copied;
            }
            if (!isEmpty(configDir)) {
                for (String name : REQUIRED) {
                    Path shipped = shippedDir.resolve(name);
                    Path target = configDir.resolve(name);
                    if (Files.isRegularFile(shipped) && !Files.exists(target)) {
                        Files.copy(shipped, target);
                        copied.add(target);
                    }
                }
                return copied;
            }
            try (DirectoryStream<Path> cfgs = Files.newDirectoryStream(shippedDir, "*.cfg")) {
                for (Path cfg : cfgs) {
                    Path target = configDir.resolve(cfg.getFileName());
                    Files.copy(cfg, target);
                    copied.add(target);
                }
            }
        } catch (IOException e) {
            throw new LaunchException("cannot seed " + configDir + " from " + shippedDir + ": " + e, e);
        }
        copied.sort(null);
        return copied;
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }
}
