package org.zrm.logbridge.internal;

import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.service.log.LogEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps one OSGi {@link LogEntry} onto an SLF4J call. The SLF4J logger name is the OSGi logger
 * name when the entry has one (e.g. {@code org.apache.felix.scr}), otherwise the originating
 * bundle's symbolic name, so logback can filter per component.
 */
final class Slf4jForwarder {

    void forward(LogEntry entry) {
        Logger logger = LoggerFactory.getLogger(loggerName(entry));
        String message = describe(entry);
        Throwable error = entry.getException();
        switch (entry.getLogLevel()) {
            case AUDIT, ERROR -> logger.error(message, error);
            case WARN -> logger.warn(message, error);
            case INFO -> logger.info(message, error);
            case DEBUG -> logger.debug(message, error);
            case TRACE -> logger.trace(message, error);
        }
    }

    static String loggerName(LogEntry entry) {
        String name = entry.getLoggerName();
        if (name != null && !name.isEmpty() && !"LogService".equals(name)
                && !org.osgi.service.log.Logger.ROOT_LOGGER_NAME.equals(name)) {
            return name;
        }
        Bundle bundle = entry.getBundle();
        return bundle == null || bundle.getSymbolicName() == null ? "osgi" : bundle.getSymbolicName();
    }

    static String describe(LogEntry entry) {
        StringBuilder text = new StringBuilder(entry.getMessage() == null ? "" : entry.getMessage());
        Bundle bundle = entry.getBundle();
        ServiceReference<?> service = entry.getServiceReference();
        if (bundle != null && !loggerName(entry).equals(bundle.getSymbolicName())) {
            text.append(" [bundle=").append(bundle.getSymbolicName()).append(']');
        }
        if (service != null) {
            text.append(" [service.id=").append(service.getProperty("service.id")).append(']');
        }
        return text.toString();
    }
}
