package org.zrm.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Decides the launch folders from the environment and the launcher's location, and creates them.
 *
 * <p>The project folder is {@code ZRM_HOME}, else the nearest ancestor of the launcher's code
 * location that has a {@code runtime/} folder (the jar sits in {@code runtime/launcher/target/}).
 * The other folders default to {@code conf/}, {@code deploy/} and {@code run/} inside it.
 */
public final class FolderResolver {
    private final Map<String, String> env;
    private final Path codeLocation;
    private final Path workingDirectory;

    /**
     * @param env the launcher's environment
     * @param codeLocation the launcher jar (or classes folder)
     * @param workingDirectory what relative paths in the environment are relative to
     */
    public FolderResolver(Map<String, String> env, Path codeLocation, Path workingDirectory) {
        this.env = env;
        this.codeLocation = codeLocation;
        this.workingDirectory = workingDirectory;
    }

    /** Resolves the folders and creates those that are missing. */
    public LaunchFolders resolve() {
        Path project = fromEnv(EnvRegistry.ZRM_HOME);
        if (project == null) {
            project = findProject();
        }
        LaunchFolders folders = new LaunchFolders(project,
                orDefault(EnvRegistry.ZRM_CONFIG_DIR, project.resolve("conf")),
                orDefault(EnvRegistry.ZRM_DEPLOY_DIR, project.resolve("deploy")),
                orDefault(EnvRegistry.ZRM_STATE_DIR, project.resolve("run")));
        for (Path dir : new Path[] {folders.config(), folders.deploy(), folders.state()}) {
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw new LaunchException("cannot create folder " + dir + ": " + e, e);
            }
        }
        return folders;
    }

    private Path findProject() {
        for (Path p = codeLocation.toAbsolutePath().normalize(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("runtime")) && Files.isDirectory(p.resolve("bundles"))) {
                return p;
            }
        }
        throw new LaunchException("cannot find the ZRM project folder above " + codeLocation
                + " (a folder with runtime/ and bundles/); set " + EnvRegistry.ZRM_HOME + ".");
    }

    private Path orDefault(String name, Path fallback) {
        Path p = fromEnv(name);
        return p != null ? p : fallback.toAbsolutePath().normalize();
    }

    private Path fromEnv(String name) {
        String value = env.get(name);
        return EnvDerivation.isBlank(value) ? null : workingDirectory.resolve(value.strip()).toAbsolutePath().normalize();
    }
}
