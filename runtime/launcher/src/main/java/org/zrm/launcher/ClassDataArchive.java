package org.zrm.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * The runtime's class-data-sharing archive (the JDK's dynamic CDS archive), kept with the build in
 * {@code runtime/target/cds/}.
 *
 * <p>Why: a start loads about 6,000 classes (Felix, Jetty, Jackson, pgjdbc, ZRM's bundles), and
 * parsing and verifying them is most of the two seconds before the change streamer begins its own
 * work. The first start of a build runs with {@code -XX:ArchiveClassesAtExit}, so the JVM writes
 * the classes it loaded when the runtime stops; every later start maps them with
 * {@code -XX:SharedArchiveFile}. Classes of the OSGi bundles' class loaders are taken from the
 * archive only when their bytes are the same (the JVM compares size and CRC), so a changed bundle
 * is simply loaded from its jar.
 *
 * <p>The archive belongs to one build and one JVM: its name carries a digest of the runtime jar's
 * path, size, modification time and content and of the JVM's home and version, so a rebuild or
 * another JDK starts a new one (and the first publication of a new archive removes those of
 * earlier builds). The JVM writes to a temporary name owned by this launcher's process; the
 * launcher publishes it under the final name with an atomic rename only after the runtime exited
 * by itself or after SIGTERM, never after SIGKILL or SIGABRT (the launcher's own kill, the OOM
 * killer, a crash), which could cut the write short. When the folder cannot be written, or when
 * {@code ZRM_JAVA_OPTS} chooses class data sharing itself ({@code -Xshare:…},
 * {@code SharedArchiveFile}, {@code ArchiveClassesAtExit}), the launcher adds nothing.
 */
final class ClassDataArchive {
    private static final String PREFIX = "zrm-";
    private static final String ARCHIVE_SUFFIX = ".jsa";
    private static final String PARTIAL_SUFFIX = ".jsa.part";
    /** {@code zrm-<digest>.<launcher pid>.jsa.part}: an archive being written by a runtime. */
    private static final Pattern PARTIAL = Pattern.compile(Pattern.quote(PREFIX) + "[0-9a-f]+\\.(\\d+)"
            + Pattern.quote(PARTIAL_SUFFIX));

    private final Path folder;
    private final Path runtimeJar;
    private final String jvm;
    private final long launcherPid;

    /**
     * @param folder where archives are kept ({@link LaunchFolders#classDataFolder()})
     * @param runtimeJar the runtime jar the archive describes
     * @param jvm what identifies the JVM that runs it (its home and version)
     * @param launcherPid this launcher's process id, which names the archive being written
     */
    ClassDataArchive(Path folder, Path runtimeJar, String jvm, long launcherPid) {
        this.folder = folder;
        this.runtimeJar = runtimeJar;
        this.jvm = jvm;
        this.launcherPid = launcherPid;
    }

    /** The identity of the JVM the launcher runs on, which is the JVM the runtime runs on. */
    static String currentJvm() {
        return System.getProperty("java.home") + '|' + System.getProperty("java.vm.name") + '|'
                + System.getProperty("java.vm.version");
    }

    /**
     * What one launch does with the archive.
     *
     * @param jvmOptions options for the runtime's JVM, before {@code ZRM_JAVA_OPTS}; empty for none
     * @param description one line for the launch report
     * @param writing where the runtime writes a new archive, or {@code null} when it writes none
     * @param archive the archive's final name, or {@code null} when the launcher adds nothing
     */
    record Plan(List<String> jvmOptions, String description, Path writing, Path archive) {
        static Plan none(String why) {
            return new Plan(List.of(), "not used: " + why, null, null);
        }
    }

    /**
     * Decides whether this start maps an archive, writes one, or leaves class data sharing alone.
     *
     * @param userOptions {@code ZRM_JAVA_OPTS}, already split
     */
    Plan plan(List<String> userOptions) {
        for (String option : userOptions) {
            String o = option.toLowerCase(Locale.ROOT);
            if (o.startsWith("-xshare") || o.contains("sharedarchivefile") || o.contains("archiveclassesatexit")) {
                return Plan.none("ZRM_JAVA_OPTS chooses class data sharing (" + option + ")");
            }
        }
        String name;
        try {
            name = PREFIX + digest();
        } catch (IOException e) {
            return Plan.none("cannot read " + runtimeJar + ": " + e.getMessage());
        }
        Path archive = folder.resolve(name + ARCHIVE_SUFFIX);
        if (Files.isRegularFile(archive)) {
            return new Plan(List.of("-XX:SharedArchiveFile=" + archive), "mapping " + archive, null, archive);
        }
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            return Plan.none("cannot create " + folder + ": " + e.getMessage());
        }
        if (!Files.isWritable(folder)) {
            return Plan.none(folder + " is not writable");
        }
        Path writing = folder.resolve(name + "." + launcherPid + PARTIAL_SUFFIX);
        // The JVM reports every class it cannot archive (old class versions, classes never linked)
        // as a [cds] warning at exit: hundreds of lines in the runtime's log that need no action.
        return new Plan(List.of("-XX:ArchiveClassesAtExit=" + writing, "-Xlog:cds=off"),
                "first start of this build: the runtime writes " + archive + " when it stops, and later starts map it",
                writing, archive);
    }

    /**
     * Publishes the archive the runtime wrote, once it has exited; called only when it ended in
     * order ({@link RuntimeSupervisor#onChildExit}). Removes archives of earlier builds and
     * archives left half-written by launchers that no longer run.
     *
     * @return one line for the launcher's output, or {@code null} when the plan wrote nothing
     */
    String publish(Plan plan) {
        if (plan.writing() == null) {
            return null;
        }
        try {
            if (!Files.isRegularFile(plan.writing()) || Files.size(plan.writing()) == 0) {
                Files.deleteIfExists(plan.writing());
                return "class data archive: the runtime wrote none; the next start tries again";
            }
            Files.move(plan.writing(), plan.archive(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            long mb = Files.size(plan.archive()) >> 20;
            removeLeftovers(plan.archive());
            return "class data archive: saved " + plan.archive() + " (" + mb + " MB); the next start maps it";
        } catch (IOException e) {
            return "class data archive: cannot publish " + plan.writing() + ": " + e.getMessage()
                    + "; the next start tries again";
        }
    }

    /** Forgets an archive the runtime wrote but must not be used (it may have died while writing). */
    String discard(Plan plan) {
        if (plan.writing() == null) {
            return null;
        }
        try {
            Files.deleteIfExists(plan.writing());
            return null;
        } catch (IOException e) {
            return "class data archive: cannot remove the partial " + plan.writing() + ": " + e.getMessage();
        }
    }

    private void removeLeftovers(Path keep) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(folder, PREFIX + "*")) {
            for (Path p : entries) {
                String n = p.getFileName().toString();
                if (p.equals(keep)) {
                    continue;
                }
                if (n.endsWith(ARCHIVE_SUFFIX)) {
                    Files.deleteIfExists(p); // another build's or another JVM's
                    continue;
                }
                Matcher m = PARTIAL.matcher(n);
                // A launcher that still runs may be waiting for its runtime to write this one.
                if (m.matches() && !ProcessHandle.of(Long.parseLong(m.group(1))).map(ProcessHandle::isAlive).orElse(false)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private String digest() throws IOException {
        // The content, not only size and time: the build gives the jar the time of its newest
        // entry, so a rebuild that changes a bundle may keep both. A CRC of the 25 MB jar costs
        // about 10 ms of a start.
        CRC32 crc = new CRC32();
        try (InputStream in = Files.newInputStream(runtimeJar)) {
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                crc.update(buffer, 0, n);
            }
        }
        String identity = runtimeJar.toAbsolutePath().normalize() + "|" + Files.size(runtimeJar) + "|"
                + Files.getLastModifiedTime(runtimeJar).toMillis() + "|" + crc.getValue() + "|" + jvm;
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
