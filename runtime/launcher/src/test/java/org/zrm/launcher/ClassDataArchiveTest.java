package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassDataArchiveTest {
    @TempDir
    Path tmp;
    private Path jar;
    private Path folder;

    @BeforeEach
    void runtimeJar() throws Exception {
        jar = Files.writeString(tmp.resolve("zrm.jar"), "not really a jar");
        folder = tmp.resolve("cds");
    }

    private ClassDataArchive archive(String jvm, long pid) {
        return new ClassDataArchive(folder, jar, jvm, pid);
    }

    @Test
    void aRuntimeKilledWhileWritingLeavesNothingBehind() throws Exception {
        ClassDataArchive.Plan plan = archive("jdk", 42).plan(List.of());
        Files.writeString(plan.writing(), "half an archive");
        assertNull(archive("jdk", 42).discard(plan));
        assertFalse(Files.exists(plan.writing()));
        assertFalse(Files.exists(plan.archive()), "a partial archive is never published");
        assertEquals(List.of("-XX:ArchiveClassesAtExit=" + plan.writing(), "-Xlog:cds=off"),
                archive("jdk", 42).plan(List.of()).jvmOptions(), "the next start writes again");
    }

    @Test
    void aRuntimeThatWroteNoArchiveIsReportedAndTriedAgain() {
        ClassDataArchive.Plan plan = archive("jdk", 42).plan(List.of());
        assertEquals("class data archive: the runtime wrote none; the next start tries again", archive("jdk", 42).publish(plan));
        assertTrue(archive("jdk", 42).plan(List.of()).writing() != null);
    }

    @Test
    void anotherJvmHasItsOwnArchive() throws Exception {
        ClassDataArchive.Plan a = archive("jdk-a", 42).plan(List.of());
        Files.writeString(a.writing(), "archive a");
        archive("jdk-a", 42).publish(a);
        ClassDataArchive.Plan b = archive("jdk-b", 42).plan(List.of());
        assertTrue(b.writing() != null, "jdk-b cannot map jdk-a's archive");
        assertFalse(a.archive().equals(b.archive()));
    }

    @Test
    void publishingKeepsWhatALiveLauncherIsWritingAndRemovesWhatADeadOneLeft() throws Exception {
        ClassDataArchive.Plan plan = archive("jdk", 42).plan(List.of());
        long live = ProcessHandle.current().pid();
        Path livePartial = folder.resolve("zrm-0123456789abcdef." + live + ".jsa.part");
        Path deadPartial = folder.resolve("zrm-0123456789abcdef.999999999.jsa.part");
        Path oldBuild = folder.resolve("zrm-fedcba9876543210.jsa");
        Path unrelated = folder.resolve("notes.txt");
        for (Path p : List.of(livePartial, deadPartial, oldBuild, unrelated)) {
            Files.writeString(p, "x");
        }
        Files.writeString(plan.writing(), "the new archive");
        String result = archive("jdk", 42).publish(plan);
        assertTrue(result.startsWith("class data archive: saved " + plan.archive()), result);
        assertEquals("the new archive", Files.readString(plan.archive()));
        assertTrue(Files.exists(livePartial), "a launcher still running may be about to publish it");
        assertFalse(Files.exists(deadPartial));
        assertFalse(Files.exists(oldBuild));
        assertTrue(Files.exists(unrelated), "only the launcher's own files are touched");
    }

    @Test
    void aFolderThatCannotBeCreatedMeansNoSharing() throws Exception {
        Files.writeString(folder, "a file where the folder should be");
        ClassDataArchive.Plan plan = archive("jdk", 42).plan(List.of());
        assertEquals(List.of(), plan.jvmOptions());
        assertTrue(plan.description().startsWith("not used: cannot create " + folder), plan.description());
    }

    @Test
    void userOptionsAboutSharingInAnySpellingWin() {
        for (String o : List.of("-Xshare:auto", "-XX:SharedArchiveFile=/x.jsa", "-XX:ArchiveClassesAtExit=/y.jsa")) {
            ClassDataArchive.Plan plan = archive("jdk", 42).plan(List.of("-Xmx1g", o));
            assertEquals(List.of(), plan.jvmOptions(), o);
            assertNull(plan.writing());
        }
    }
}
