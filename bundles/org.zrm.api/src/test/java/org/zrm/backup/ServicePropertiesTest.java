package org.zrm.backup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLog;
import org.zrm.changesource.ChangeSource;
import org.zrm.changestreamer.ChangeStreamer;
import org.zrm.changestreamer.SnapshotUnavailableException;

/**
 * Service-property names and protocol constants appear in configuration files, target filters and
 * on the wire; renaming one silently breaks deployments, so they are pinned here.
 */
class ServicePropertiesTest {

    @Test
    void servicePropertyNames() {
        assertEquals("zrm.changesource.type", ChangeSource.TYPE);
        assertEquals("zrm.changelog.kind", ChangeLog.KIND);
        assertEquals("zrm.backup.strategy", BackupMonitor.STRATEGY);
    }

    @Test
    void strategyValuesMatchTheCoordinatorSetting() {
        assertEquals("replica", BackupMonitor.STRATEGY_REPLICA);
        assertEquals("litestream3", BackupMonitor.STRATEGY_LITESTREAM3);
        assertEquals("vfs", BackupMonitor.STRATEGY_VFS);
    }

    @Test
    void protocolConstants() {
        assertEquals(6, ChangeStreamer.PROTOCOL_VERSION);
        assertEquals(1, ChangeStreamer.MIN_PROTOCOL_VERSION);
        assertEquals("replication-manager is not configured with a ZERO_LITESTREAM_BACKUP_URL",
                SnapshotUnavailableException.NOT_CONFIGURED);
    }
}
