package org.zrm.changestreamer.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.osgi.service.component.annotations.Component;
import org.zrm.config.ConfigProblem;
import org.zrm.config.ConfigValidator;

/**
 * The rules of PID {@value BackupComponent#PID} that its metatype does not express: the strategy
 * is compared stripped and without case, and the minimum cleanup delay must be positive. A rejected
 * change never reaches {@link BackupComponent}, which keeps its current selection (see the admin
 * bundle's configuration plugin).
 */
@Component(property = ConfigValidator.PID_PROPERTY + "=" + BackupComponent.PID)
public final class BackupConfigValidator implements ConfigValidator {

    @Override
    public List<ConfigProblem> validate(String pid, Map<String, Object> properties) {
        List<ConfigProblem> problems = new ArrayList<>();
        Object strategy = properties.get("strategy");
        if (strategy != null
                && !BackupSettings.STRATEGIES.contains(strategy.toString().strip().toLowerCase(Locale.ROOT))) {
            problems.add(new ConfigProblem("strategy",
                    "must be one of auto, replica, litestream3, vfs: '" + strategy + "'"));
        }
        Object delay = properties.get("minCleanupDelayMs");
        if (delay != null) {
            try {
                if (Long.parseLong(delay.toString().strip()) <= 0) {
                    problems.add(new ConfigProblem("minCleanupDelayMs", "must be positive: " + delay));
                }
            } catch (NumberFormatException e) {
                problems.add(new ConfigProblem("minCleanupDelayMs", "not a whole number: '" + delay + "'"));
            }
        }
        return problems;
    }
}
