package org.zrm.config;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Checks the rules of one component's configuration that its metatype cannot express (ranges that
 * depend on each other, a set of accepted words compared without case, URLs), before the component
 * sees the configuration.
 *
 * <p>Register an implementation as a service with the property {@value #PID_PROPERTY} naming the
 * PID or PIDs (a factory PID for factory configurations) it validates. The admin bundle's
 * configuration plugin calls every matching validator for each delivery of such a configuration,
 * after {@code $[env:…]} interpolation and after the generic checks against the metatype (type,
 * cardinality, options). When any validator reports a problem, the delivery is rejected: one ERROR
 * line names the file, the keys and the reasons, {@code /status} shows it, and the component keeps
 * receiving its last good configuration.
 *
 * <p><b>Threading.</b> {@link #validate} runs on Configuration Admin's delivery thread: it must be
 * quick, thread-safe and must not do I/O or wait (no DNS lookups, no connection attempts).
 */
@ConsumerType
public interface ConfigValidator {

    /** Service property: the PID(s), a {@code String} or {@code String[]}, this validator checks. */
    String PID_PROPERTY = "zrm.config.pid";

    /**
     * @param pid the configuration's PID (for a factory configuration: its factory PID)
     * @param properties the configuration as the component would receive it (interpolated; values
     *        as Configuration Admin holds them, typically {@code String}s from a {@code .cfg} file);
     *        read-only
     * @return the problems found, in the order to report them; empty when the configuration is valid
     */
    List<ConfigProblem> validate(String pid, Map<String, Object> properties);
}
