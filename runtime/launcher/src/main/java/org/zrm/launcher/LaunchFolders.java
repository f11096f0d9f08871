package org.zrm.launcher;

import java.nio.file.Path;

/**
 * The folders of one launch, all absolute.
 *
 * @param project the repository root (holds {@code runtime/})
 * @param config the watched configuration folder ({@code .cfg} files)
 * @param deploy the hot-deploy folder for bundle jars
 * @param state the state folder: embedded PostgreSQL data, replica file, the runtime's working folder
 */
public record LaunchFolders(Path project, Path config, Path deploy, Path state) {
    /** @return the OSGi runtime's executable jar */
    public Path runtimeJar() {
        return project.resolve("runtime/target/zrm.jar");
    }

    /**
     * @return where the runtime's class-data-sharing archives are kept: with the build, since an
     *     archive describes one build of the runtime jar ({@link ClassDataArchive})
     */
    public Path classDataFolder() {
        return project.resolve("runtime/target/cds");
    }

    /** @return the folder of the shipped default configuration */
    public Path shippedConfig() {
        return project.resolve("runtime/conf");
    }

    /** @return the logback configuration passed to the runtime */
    public Path logbackConfig() {
        return shippedConfig().resolve("logback.xml");
    }

    /** @return the java.util.logging configuration passed to the runtime (SPI Fly logs through JUL) */
    public Path julConfig() {
        return shippedConfig().resolve("jul.properties");
    }

    /** @return the embedded PostgreSQL's data folder */
    public Path embeddedPgData() {
        return state.resolve("pgdata");
    }
}
