package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

class DeployFolderTest {

    @Test
    void configuredFolderWinsOverFrameworkProperty() {
        assertEquals(Path.of("/opt/zrm/deploy"), DeployFolder.resolve("/opt/zrm/deploy", "/elsewhere"));
    }

    @Test
    void frameworkPropertyIsTheDefault() {
        assertEquals(Path.of("/srv/deploy"), DeployFolder.resolve("", "/srv/deploy"));
        assertEquals(Path.of("/srv/deploy"), DeployFolder.resolve("  ", "/srv/deploy"));
    }

    @Test
    void withNeitherTheFolderIsDeployUnderTheWorkingDirectory() {
        Path resolved = DeployFolder.resolve("", null);
        assertTrue(resolved.isAbsolute());
        assertEquals(Path.of("deploy").toAbsolutePath().normalize(), resolved);
    }

    @Test
    void tooFastPollingIsRejectedWithTheValueInTheMessage() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DeployFolder.checkPoll(10));
        assertTrue(e.getMessage().contains("10"), e.getMessage());
        DeployFolder.checkPoll(100);
    }
}
