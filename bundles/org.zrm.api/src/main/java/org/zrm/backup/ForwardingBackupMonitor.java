package org.zrm.backup;

import java.util.Map;
import java.util.Optional;

/**
 * A {@link BackupMonitor} that forwards every call to another one. Declarative Services registers
 * the component instance itself as the service, while the monitor's logic lives in a plain class
 * that tests construct directly; a monitor's DS component extends this class and supplies that
 * plain monitor, instead of repeating the forwarding.
 */
public abstract class ForwardingBackupMonitor implements BackupMonitor {

    /** @return the monitor every call is forwarded to; the same instance for the component's life */
    protected abstract BackupMonitor delegate();

    @Override
    public String strategy() {
        return delegate().strategy();
    }

    @Override
    public Optional<String> backupURL() {
        return delegate().backupURL();
    }

    @Override
    public void start(BackupMonitorContext context) {
        delegate().start(context);
    }

    @Override
    public void stop() {
        delegate().stop();
    }

    @Override
    public Map<String, Object> status() {
        return delegate().status();
    }
}
