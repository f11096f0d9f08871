package org.zrm.logbridge.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogLevel;
import org.osgi.service.log.LogListener;
import org.osgi.service.log.LogReaderService;
import org.osgi.service.log.admin.LoggerAdmin;
import org.osgi.service.log.admin.LoggerContext;

/**
 * Forwards OSGi Log Service entries (SCR, ConfigAdmin, FileInstall, framework events and any
 * bundle that logs through {@code org.osgi.service.log}) to SLF4J, so that every line ends up in
 * one logback configuration.
 *
 * <p>The OSGi Log root level defaults to WARN, which would drop SCR's and FileInstall's INFO
 * messages before they reach us; the bridge opens the root level to DEBUG and lets logback do
 * the filtering. It is written by hand because {@code org.apache.felix.logback} 1.0.6 does not
 * forward entries to logback 1.5 (see BUILD.md, pitfall 3).
 */
@Component(immediate = true)
public final class LogBridge {

    private final LogReaderService reader;
    private final LogListener listener;

    @Activate
    public LogBridge(@Reference LogReaderService reader, @Reference LoggerAdmin loggerAdmin) {
        this.reader = reader;
        this.listener = new Slf4jForwarder()::forward;
        openRootLevel(loggerAdmin.getLoggerContext(null));
        // Register first, then replay the history: an entry logged in between may be seen twice,
        // which is better than missing the activation errors that made someone look at the log.
        reader.addLogListener(listener);
        replayHistory(reader.getLog());
    }

    @Deactivate
    void deactivate() {
        reader.removeLogListener(listener);
    }

    private static void openRootLevel(LoggerContext root) {
        Map<String, LogLevel> levels = root.getLogLevels();
        levels.put(org.osgi.service.log.Logger.ROOT_LOGGER_NAME, LogLevel.DEBUG);
        root.setLogLevels(levels);
    }

    private void replayHistory(Enumeration<LogEntry> newestFirst) {
        List<LogEntry> entries = new ArrayList<>(Collections.list(newestFirst));
        Collections.reverse(entries);
        Slf4jForwarder forwarder = new Slf4jForwarder();
        entries.forEach(forwarder::forward);
    }
}
