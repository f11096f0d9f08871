package org.zrm.admin.internal;

import java.util.stream.Collectors;

import org.zrm.admin.internal.RuntimeStatus.BundleStatus;
import org.zrm.admin.internal.RuntimeStatus.ComponentStatus;

/** Renders a {@link RuntimeStatus} as an aligned, human-readable table. */
final class StatusText {

    private StatusText() {
    }

    static String render(RuntimeStatus status) {
        StringBuilder out = new StringBuilder();
        out.append("configDir: ").append(status.configDir()).append('\n');
        out.append("deployDir: ").append(status.deployDir()).append('\n');
        out.append("healthy:   ").append(status.healthy());
        if (!status.unhealthySections().isEmpty()) {
            out.append(" (unhealthy: ").append(String.join(", ", status.unhealthySections())).append(')');
        }
        out.append("\n\n");
        out.append(String.format("%-5s %-12s %-36s %s%n", "ID", "STATE", "BUNDLE", "VERSION"));
        for (BundleStatus b : status.bundles()) {
            out.append(String.format("%-5d %-12s %-36s %s%n", b.id(), b.state(), b.symbolicName(), b.version()));
        }
        out.append('\n');
        out.append(String.format("%-26s %-56s %s%n", "STATE", "COMPONENT", "BUNDLE"));
        for (ComponentStatus c : status.components()) {
            out.append(String.format("%-26s %-56s %s%n", c.state(), c.name(), c.bundle()));
            if (!c.unsatisfiedReferences().isEmpty()) {
                out.append("    unsatisfied: ").append(c.unsatisfiedReferences().stream()
                        .map(r -> r.name() + " (" + r.missing() + ")")
                        .collect(Collectors.joining(", "))).append('\n');
            }
            if (c.failure() != null) {
                out.append("    failure: ").append(c.failure().lines().findFirst().orElse("")).append('\n');
            }
        }
        status.sections().forEach((name, section) -> {
            out.append('\n').append(name).append(":\n");
            appendValue(out, section, "  ");
        });
        return out.toString();
    }

    /** Nested maps become indented "key: value" lines; anything else is printed as is. */
    private static void appendValue(StringBuilder out, Object value, String indent) {
        if (value instanceof java.util.Map<?, ?> map) {
            map.forEach((key, nested) -> {
                if (nested instanceof java.util.Map<?, ?>) {
                    out.append(indent).append(key).append(":\n");
                    appendValue(out, nested, indent + "  ");
                } else {
                    out.append(indent).append(key).append(": ").append(nested).append('\n');
                }
            });
        } else {
            out.append(indent).append(value).append('\n');
        }
    }
}
