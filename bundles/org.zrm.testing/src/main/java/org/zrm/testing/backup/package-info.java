/**
 * Test doubles for backup monitors: a recording {@link org.zrm.backup.BackupMonitorContext} and a
 * manually advanced clock, so monitor tests drive checks directly instead of waiting for timers.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.zrm.testing.backup;
