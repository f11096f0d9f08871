package org.zrm.backup.vfs.internal.process;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the jars (or class folders) that hold given classes, to put them on the reader child's
 * {@code -cp}.
 *
 * <p>What Felix reports (checked with Felix 7.0.5, see {@code ReaderClasspathTest}): a bundle
 * installed from a {@code file:} URL has that URL as location and as its classes' code source; one
 * installed as {@code reference:file:…} has the plain {@code file:} URL as code source; one
 * installed from a stream has whatever location string the installer chose and a useless code
 * source ({@code jar:<location>}). The shipped runtime is the last case: the bnd executable jar
 * installs every bundle from its embedded {@code jar/<name>.jar} entry. Such a bundle is copied,
 * once per bundle version, into a jar in this bundle's persistent data area ({@code
 * reader-classpath/}); older copies of the same bundle are deleted then. Outside OSGi (unit tests)
 * the code source is used.
 */
final class ReaderClasspath {

    private static final Logger LOG = LoggerFactory.getLogger(ReaderClasspath.class);
    static final String DATA_FOLDER = "reader-classpath";

    private final BundleContext context;

    /** @param context this bundle's context, for the data area; {@code null} outside OSGi */
    ReaderClasspath(BundleContext context) {
        this.context = context;
    }

    /**
     * @param anchors one class from each jar needed
     * @return the distinct paths, in order
     * @throws IOException if a class's jar cannot be located or copied
     */
    List<Path> resolve(List<Class<?>> anchors) throws IOException {
        Set<Path> paths = new LinkedHashSet<>();
        for (Class<?> anchor : anchors) {
            paths.add(locate(anchor));
        }
        return new ArrayList<>(paths);
    }

    Path locate(Class<?> anchor) throws IOException {
        Bundle bundle = FrameworkUtil.getBundle(anchor);
        if (bundle == null) {
            return codeSource(anchor).orElseThrow(() -> new IOException("cannot locate the jar of " + anchor.getName()
                    + ": its code source is not a local file"));
        }
        Optional<Path> file = fileLocation(bundle.getLocation()).or(() -> codeSource(anchor));
        return file.isPresent() ? file.get() : copy(bundle);
    }

    /** @return the file a {@code file:} or {@code reference:file:} bundle location names, if it exists */
    static Optional<Path> fileLocation(String location) {
        String s = location.startsWith("reference:") ? location.substring("reference:".length()) : location;
        if (!s.startsWith("file:")) {
            return Optional.empty();
        }
        Path path;
        try {
            path = Path.of(URI.create(s));
        } catch (IllegalArgumentException e) {
            path = Path.of(s.substring("file:".length())); // relative: file:bundles/x.jar
        }
        return Files.exists(path) ? Optional.of(path.toAbsolutePath()) : Optional.empty();
    }

    private static Optional<Path> codeSource(Class<?> anchor) {
        CodeSource source = anchor.getProtectionDomain().getCodeSource();
        URL url = source == null ? null : source.getLocation();
        if (url == null || !"file".equals(url.getProtocol())) {
            return Optional.empty();
        }
        try {
            Path path = Path.of(url.toURI());
            return Files.exists(path) ? Optional.of(path) : Optional.empty();
        } catch (URISyntaxException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private Path copy(Bundle bundle) throws IOException {
        File data = context == null ? null : context.getDataFile(DATA_FOLDER);
        if (data == null) {
            throw new IOException("bundle " + bundle.getSymbolicName() + " is installed from " + bundle.getLocation()
                    + ", not from a file, and there is no bundle data area to copy it to; set litestream.vfsReaderCommand");
        }
        Path folder = data.toPath();
        Files.createDirectories(folder);
        String prefix = bundle.getSymbolicName() + "-";
        Path target = folder.resolve(prefix + bundle.getVersion() + "-" + bundle.getLastModified() + ".jar");
        if (Files.isRegularFile(target)) {
            return target;
        }
        deleteOlderCopies(folder, prefix);
        Path temporary = Files.createTempFile(folder, prefix, ".tmp");
        try {
            int entries = writeEntries(bundle, temporary);
            Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            LOG.info("vfs backup monitor: copied bundle {} ({} entries, installed from {}) to {} for the reader child",
                    bundle.getSymbolicName(), entries, bundle.getLocation(), target);
            return target;
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    private static void deleteOlderCopies(Path folder, String prefix) throws IOException {
        // "<bsn>-<digit>…": not the copies of a bundle whose name merely starts with this one's
        try (DirectoryStream<Path> old = Files.newDirectoryStream(folder, prefix + "[0-9]*.jar")) {
            for (Path p : old) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static int writeEntries(Bundle bundle, Path jar) throws IOException {
        Enumeration<URL> entries = bundle.findEntries("/", "*", true);
        if (entries == null) {
            throw new IOException("bundle " + bundle.getSymbolicName() + " has no entries to copy");
        }
        Set<String> written = new HashSet<>();
        try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(jar))) {
            while (entries.hasMoreElements()) {
                URL url = entries.nextElement();
                String name = url.getPath().startsWith("/") ? url.getPath().substring(1) : url.getPath();
                if (name.isEmpty() || !written.add(name)) {
                    continue; // the root, or an entry a fragment repeats
                }
                out.putNextEntry(new ZipEntry(name));
                if (!name.endsWith("/")) {
                    try (InputStream in = url.openStream()) {
                        in.transferTo(out);
                    }
                }
                out.closeEntry();
            }
        }
        return written.size();
    }
}
