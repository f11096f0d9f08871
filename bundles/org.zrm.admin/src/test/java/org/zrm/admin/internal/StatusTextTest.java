package org.zrm.admin.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.zrm.admin.internal.RuntimeStatus.BundleStatus;
import org.zrm.admin.internal.RuntimeStatus.ComponentStatus;
import org.zrm.admin.internal.RuntimeStatus.UnsatisfiedReference;

class StatusTextTest {

    @Test
    void rendersFoldersBundlesComponentsAndWhatIsMissing() {
        RuntimeStatus status = new RuntimeStatus("/c", "/d",
                List.of(new BundleStatus(7, "org.zrm.api", "0.1.0", "ACTIVE")),
                List.of(new ComponentStatus("org.zrm.storer.Storer", "org.zrm.storer", "UNSATISFIED_REFERENCE",
                        List.of(new UnsatisfiedReference("changeSource", "org.zrm.changesource.ChangeSource",
                                "(zrm.changesource.type=nonsense)")), null),
                        new ComponentStatus("org.zrm.x.Broken", "org.zrm.x", "FAILED_ACTIVATION", List.of(),
                                "java.lang.IllegalArgumentException: bad\n\tat x")),
                java.util.Map.of("changesource.pg", java.util.Map.of("initialSync",
                        java.util.Map.of("phase", "COPYING"))));
        String text = StatusText.render(status);
        assertTrue(text.contains("configDir: /c"), text);
        assertTrue(text.contains("deployDir: /d"), text);
        assertTrue(text.contains("healthy:   false"), text);
        assertTrue(text.matches("(?s).*7\\s+ACTIVE\\s+org\\.zrm\\.api\\s+0\\.1\\.0.*"), text);
        assertTrue(text.contains("unsatisfied: changeSource (no org.zrm.changesource.ChangeSource service matches"
                + " (zrm.changesource.type=nonsense))"), text);
        assertTrue(text.contains("failure: java.lang.IllegalArgumentException: bad"), text);
        assertFalse(text.contains("\tat x"), "only the first line of a failure is shown");
        assertTrue(text.contains("changesource.pg:\n  initialSync:\n    phase: COPYING\n"), text);
    }

    @Test
    void healthyOnlyWhenAllBundlesActiveAndComponentsSatisfied() {
        RuntimeStatus ok = new RuntimeStatus("/c", "/d", List.of(new BundleStatus(1, "org.zrm.api", "1", "ACTIVE")),
                List.of(new ComponentStatus("a", "b", "SATISFIED", List.of(), null)), java.util.Map.of());
        assertTrue(ok.healthy());
        RuntimeStatus resolvedOnly = new RuntimeStatus("/c", "/d",
                List.of(new BundleStatus(1, "org.zrm.api", "1", "RESOLVED")), List.of(), java.util.Map.of());
        assertFalse(resolvedOnly.healthy());
    }

    @Test
    void anUnhealthySectionMakesTheRuntimeUnhealthy() {
        RuntimeStatus wedged = new RuntimeStatus("/c", "/d", List.of(new BundleStatus(1, "org.zrm.api", "1", "ACTIVE")),
                List.of(), java.util.Map.of("backup", java.util.Map.of()), List.of("backup"));
        assertFalse(wedged.healthy());
        assertTrue(StatusText.render(wedged).contains("healthy:   false (unhealthy: backup)"), StatusText.render(wedged));
    }

    @Test
    void theJsonNamesTheMissingServiceAndFilter() throws Exception {
        RuntimeStatus status = new RuntimeStatus("/c", "/d", List.of(),
                List.of(new ComponentStatus("sel", "org.zrm.changestreamer", "UNSATISFIED_REFERENCE",
                        List.of(new UnsatisfiedReference("changeSource", "org.zrm.changesource.ChangeSource",
                                "(zrm.changesource.type=nonsense)")), null)), java.util.Map.of());
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .valueToTree(status);
        com.fasterxml.jackson.databind.JsonNode ref = json.path("components").path(0).path("unsatisfiedReferences").path(0);
        assertFalse(json.path("healthy").asBoolean());
        org.junit.jupiter.api.Assertions.assertEquals("org.zrm.changesource.ChangeSource", ref.path("service").asText());
        org.junit.jupiter.api.Assertions.assertEquals("(zrm.changesource.type=nonsense)", ref.path("target").asText());
        org.junit.jupiter.api.Assertions.assertEquals(
                "no org.zrm.changesource.ChangeSource service matches (zrm.changesource.type=nonsense)",
                ref.path("missing").asText());
    }
}
