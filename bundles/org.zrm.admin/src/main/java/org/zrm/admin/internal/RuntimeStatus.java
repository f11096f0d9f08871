package org.zrm.admin.internal;

import java.util.List;
import java.util.Map;

/**
 * A point-in-time picture of the runtime, served as JSON by {@code GET /status} and printed by
 * {@code zrm:status}. Field names are part of the operator-facing contract; add, don't rename.
 *
 * @param configDir  absolute folder FileInstall watches for {@code .cfg}/{@code .config} files
 * @param deployDir  absolute folder where a dropped bundle jar is installed and started
 * @param bundles    every ZRM bundle ({@code org.zrm.*}) with its state
 * @param components every Declarative Services component in the framework
 * @param sections   what {@link org.zrm.status.StatusContributor} services report, by section
 * @param unhealthySections the sections whose contributor reports itself unhealthy (e.g. a
 *     wedged backup stopped the pipeline), sorted
 */
public record RuntimeStatus(String configDir, String deployDir, List<BundleStatus> bundles,
        List<ComponentStatus> components, Map<String, Object> sections, List<String> unhealthySections) {

    /** A status in which every section is healthy. */
    public RuntimeStatus(String configDir, String deployDir, List<BundleStatus> bundles,
            List<ComponentStatus> components, Map<String, Object> sections) {
        this(configDir, deployDir, bundles, components, sections, List.of());
    }

    /** One installed bundle. {@code state} is the OSGi state name, e.g. {@code ACTIVE}. */
    public record BundleStatus(long id, String symbolicName, String version, String state) {
    }

    /**
     * One DS component description. {@code state} is the state of its configurations
     * ({@code ACTIVE}, {@code SATISFIED}, {@code UNSATISFIED_REFERENCE},
     * {@code UNSATISFIED_CONFIGURATION}, {@code FAILED_ACTIVATION}) or {@code DISABLED}.
     * {@code failure} carries SCR's activation failure text, if any.
     */
    public record ComponentStatus(String name, String bundle, String state,
            List<UnsatisfiedReference> unsatisfiedReferences, String failure) {
    }

    /**
     * A reference that keeps a component from being satisfied, and what would satisfy it: a
     * service of {@code service} matching {@code target} (when there is a target).
     *
     * @param name the reference's name in the component description
     * @param service the referenced service interface
     * @param target the reference's target filter, or {@code null}
     */
    public record UnsatisfiedReference(String name, String service, String target) {

        /** The operator-facing sentence: which service, matching what, is missing. */
        @com.fasterxml.jackson.annotation.JsonProperty("missing")
        public String missing() {
            return "no " + service + " service" + (target == null ? "" : " matches " + target);
        }
    }

    /**
     * True when every listed bundle is ACTIVE, no component is unsatisfied or failed, and no status
     * contributor reports itself unhealthy. Serialised
     * as {@code "healthy"} so that monitors need not re-derive it from the lists.
     */
    @com.fasterxml.jackson.annotation.JsonProperty("healthy")
    public boolean healthy() {
        return bundles.stream().allMatch(b -> "ACTIVE".equals(b.state()))
                && components.stream().allMatch(c -> "ACTIVE".equals(c.state()) || "SATISFIED".equals(c.state()))
                && unhealthySections.isEmpty();
    }
}
