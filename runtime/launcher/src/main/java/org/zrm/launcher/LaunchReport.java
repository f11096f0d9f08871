package org.zrm.launcher;

import org.zrm.secret.Secrets;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The effective launch configuration, one line each, secrets masked: what an operator needs to
 * see first when something is wrong.
 */
public final class LaunchReport {
    private LaunchReport() {}

    /**
     * @param folders the launch folders
     * @param seeded the configuration files copied into a new configuration folder
     * @param env the runtime's environment after derivation
     * @param embedded the embedded PostgreSQL, or {@code null} for an external upstream
     * @param command the runtime's command line
     */
    public static List<String> lines(LaunchFolders folders, List<Path> seeded, EnvDerivation.Result env,
            EmbeddedPostgres embedded, List<String> command) {
        List<String> lines = new ArrayList<>();
        lines.add("project dir    " + folders.project());
        lines.add("config dir     " + folders.config()
                + (seeded.isEmpty() ? "" : " (new: seeded with " + seeded.size() + " files from " + folders.shippedConfig() + ")"));
        lines.add("deploy dir     " + folders.deploy());
        lines.add("state dir      " + folders.state() + " (the runtime's working folder)");
        lines.add("postgres       " + (embedded == null ? "external (ZERO_UPSTREAM_DB)"
                : "embedded, 127.0.0.1:" + embedded.cluster().port() + ", data " + embedded.cluster().dataDir()));
        if (embedded != null) {
            lines.add("postgres bin   " + embedded.cluster().binariesOrigin());
        }
        for (EnvVar v : EnvRegistry.all()) {
            String value = env.environment().get(v.name());
            String note;
            if (value != null) {
                note = env.derived().contains(v.name()) ? " (derived)"
                        : v.name().equals(EnvRegistry.UPSTREAM_DB) && embedded != null ? " (embedded)" : "";
            } else if (v.defaultValue() != null) {
                value = v.defaultValue();
                note = " (default)";
            } else {
                continue;   // unset, no default: the runtime decides
            }
            lines.add(v.name() + "=" + (v.secret() ? Secrets.MASK : Secrets.mask(v.name(), value)) + note);
        }
        lines.add("runtime        " + Secrets.maskUrls(String.join(" ", command)));
        return lines;
    }
}
