package org.zrm.shell.internal;

import java.util.Map;

/** The effective {@code org.zrm.*} configurations: PID → properties after interpolation, unmasked. */
@FunctionalInterface
interface ConfigSource {
    /** @throws Exception if Configuration Admin cannot be read */
    Map<String, Map<String, Object>> zrmConfigurations() throws Exception;
}
