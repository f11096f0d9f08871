package org.zrm.logbridge.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Proxy;

import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogLevel;

class Slf4jForwarderTest {

    @Test
    void namedLoggerWinsOverBundleName() {
        LogEntry entry = entry("org.apache.felix.scr", bundle("org.apache.felix.scr"), "Component activated");
        assertEquals("org.apache.felix.scr", Slf4jForwarder.loggerName(entry));
        assertEquals("Component activated", Slf4jForwarder.describe(entry));
    }

    @Test
    void legacyLogServiceEntriesAreNamedAfterTheirBundle() {
        LogEntry entry = entry("LogService", bundle("org.apache.felix.fileinstall"), "Installed x.jar");
        assertEquals("org.apache.felix.fileinstall", Slf4jForwarder.loggerName(entry));
    }

    @Test
    void entriesWithoutBundleOrNameStillGetALogger() {
        assertEquals("osgi", Slf4jForwarder.loggerName(entry(null, null, "x")));
    }

    @Test
    void foreignBundleIsNamedInTheMessage() {
        LogEntry entry = entry("org.zrm.storer.Storer", bundle("org.zrm.storer"), "stored");
        assertEquals("stored [bundle=org.zrm.storer]", Slf4jForwarder.describe(entry));
    }

    private static Bundle bundle(String bsn) {
        return (Bundle) Proxy.newProxyInstance(Bundle.class.getClassLoader(), new Class<?>[] {Bundle.class},
                (proxy, method, args) -> "getSymbolicName".equals(method.getName()) ? bsn : null);
    }

    private static LogEntry entry(String loggerName, Bundle bundle, String message) {
        return (LogEntry) Proxy.newProxyInstance(LogEntry.class.getClassLoader(), new Class<?>[] {LogEntry.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getLoggerName" -> loggerName;
                    case "getBundle" -> bundle;
                    case "getMessage" -> message;
                    case "getLogLevel" -> LogLevel.INFO;
                    default -> null;
                });
    }
}
