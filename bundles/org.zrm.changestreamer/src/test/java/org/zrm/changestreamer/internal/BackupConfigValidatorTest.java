package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.config.ConfigProblem;

class BackupConfigValidatorTest {

    private final BackupConfigValidator validator = new BackupConfigValidator();

    @Test
    void acceptsTheStrategiesWithoutCaseAndAPositiveDelay() {
        assertEquals(List.of(), validator.validate(BackupComponent.PID,
                Map.of("strategy", " LiteStream3 ", "minCleanupDelayMs", "1")));
        assertEquals(List.of(), validator.validate(BackupComponent.PID, Map.of()));
    }

    @Test
    void rejectsAnUnknownStrategyAndANonPositiveDelay() {
        assertEquals(List.of(new ConfigProblem("strategy", "must be one of auto, replica, litestream3, vfs: 'tape'"),
                new ConfigProblem("minCleanupDelayMs", "must be positive: 0")),
                validator.validate(BackupComponent.PID, Map.of("strategy", "tape", "minCleanupDelayMs", "0")));
        assertEquals(List.of(new ConfigProblem("minCleanupDelayMs", "not a whole number: 'soon'")),
                validator.validate(BackupComponent.PID, Map.of("minCleanupDelayMs", "soon")));
    }
}
