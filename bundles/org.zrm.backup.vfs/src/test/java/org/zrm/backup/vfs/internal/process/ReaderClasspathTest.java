package org.zrm.backup.vfs.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;
import org.zrm.backup.vfs.internal.reader.VfsWatermarkReaderMain;

/**
 * Locating the reader child's jars, outside OSGi (code sources) and inside Felix, where the
 * shipped runtime (the bnd executable jar) installs bundles from streams under locations like
 * {@code jar/sqlite-jdbc-3.54.1.0.jar}, which name no file.
 */
class ReaderClasspathTest {

    @TempDir
    static Path storage;
    private static Framework felix;

    @BeforeAll
    static void startFelix() throws Exception {
        felix = ServiceLoader.load(FrameworkFactory.class).iterator().next().newFramework(Map.of(
                "org.osgi.framework.storage", storage.resolve("felix-cache").toString(),
                "org.osgi.framework.storage.clean", "onFirstInit"));
        felix.start();
    }

    @AfterAll
    static void stopFelix() throws Exception {
        felix.stop();
        felix.waitForStop(10_000);
    }

    private static Path sqliteJar() throws Exception {
        return Path.of(org.sqlite.JDBC.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Test
    void outsideOsgiUsesTheCodeSources() throws Exception {
        ReaderClasspath classpath = new ReaderClasspath(null);

        List<Path> paths = classpath.resolve(List.of(VfsWatermarkReaderMain.class, org.sqlite.JDBC.class,
                ObjectMapper.class, VfsWatermarkReaderMain.class));

        assertEquals(3, paths.size(), "distinct");
        assertTrue(Files.isDirectory(paths.get(0)), "this module's classes: " + paths.get(0));
        assertEquals(sqliteJar(), paths.get(1));
        assertTrue(paths.get(2).getFileName().toString().startsWith("jackson-databind-"), paths.get(2).toString());
    }

    @Test
    void aBundleInstalledFromAFileIsThatFile() throws Exception {
        BundleContext context = felix.getBundleContext();
        for (String location : List.of(sqliteJar().toUri().toString(), "reference:" + sqliteJar().toUri())) {
            Bundle bundle = context.installBundle(location);
            try {
                Class<?> jdbc = bundle.loadClass("org.sqlite.JDBC");
                assertEquals(bundle, org.osgi.framework.FrameworkUtil.getBundle(jdbc));
                assertEquals(sqliteJar(), new ReaderClasspath(context).locate(jdbc), location);
            } finally {
                bundle.uninstall();
            }
        }
    }

    @Test
    void aBundleInstalledFromAStreamIsCopiedOncePerVersion() throws Exception {
        BundleContext context = felix.getBundleContext();
        Bundle bundle;
        try (InputStream in = Files.newInputStream(sqliteJar())) {
            bundle = context.installBundle("jar/sqlite-jdbc-3.54.1.0.jar", in);
        }
        try {
            Class<?> jdbc = bundle.loadClass("org.sqlite.JDBC");
            assertEquals("jar", jdbc.getProtectionDomain().getCodeSource().getLocation().getProtocol(),
                    "Felix gives such classes no usable code source");
            ReaderClasspath classpath = new ReaderClasspath(context);

            Path copy = classpath.locate(jdbc);

            Path folder = context.getDataFile(ReaderClasspath.DATA_FOLDER).toPath();
            assertEquals(folder.resolve("org.xerial.sqlite-jdbc-3.54.1.0-" + bundle.getLastModified() + ".jar"), copy);
            try (JarFile jar = new JarFile(copy.toFile())) {
                assertNotNull(jar.getEntry("org/sqlite/JDBC.class"));
                assertNotNull(jar.getEntry("org/sqlite/native/Linux/x86_64/libsqlitejdbc.so"));
                assertEquals("org.xerial.sqlite-jdbc;singleton:=true",
                        jar.getManifest().getMainAttributes().getValue("Bundle-SymbolicName"));
            }
            FileTime written = Files.getLastModifiedTime(copy);

            assertEquals(copy, classpath.locate(jdbc));
            assertEquals(written, Files.getLastModifiedTime(copy), "reused, not rewritten");

            // a plain JVM can run from the copy
            Process java = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", copy.toString(), "org.sqlite.util.OSInfo").redirectErrorStream(true).start();
            String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(java.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, java.exitValue(), output);
            assertTrue(output.startsWith("Linux/"), output);
        } finally {
            bundle.uninstall();
        }
    }

    @Test
    void aNewVersionReplacesOlderCopies() throws Exception {
        BundleContext context = felix.getBundleContext();
        Path folder = context.getDataFile(ReaderClasspath.DATA_FOLDER).toPath();
        Files.createDirectories(folder);
        Path stale = Files.writeString(folder.resolve("org.xerial.sqlite-jdbc-3.0.0-1.jar"), "an older copy");
        Bundle bundle;
        try (InputStream in = Files.newInputStream(sqliteJar())) {
            bundle = context.installBundle("jar/other-location.jar", in);
        }
        try {
            new ReaderClasspath(context).locate(bundle.loadClass("org.sqlite.JDBC"));
            assertTrue(Files.notExists(stale));
        } finally {
            bundle.uninstall();
        }
    }

    @Test
    void fileLocations() throws Exception {
        assertEquals(sqliteJar(), ReaderClasspath.fileLocation(sqliteJar().toUri().toString()).orElseThrow());
        assertEquals(sqliteJar(), ReaderClasspath.fileLocation("reference:" + sqliteJar().toUri()).orElseThrow());
        assertTrue(ReaderClasspath.fileLocation("jar/sqlite-jdbc.jar").isEmpty());
        assertTrue(ReaderClasspath.fileLocation("file:/nonexistent/x.jar").isEmpty());
        assertTrue(ReaderClasspath.fileLocation("mvn:org.xerial/sqlite-jdbc/3.54.1.0").isEmpty());
    }
}
