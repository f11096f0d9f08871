package org.zrm.changestreamer.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops the whole runtime because of a terminal condition, the OSGi way: the system bundle is
 * stopped, so every bundle shuts down in order, and the JVM ends when the framework has. A bundle
 * never calls {@code System.exit}, which would race the framework's own shutdown.
 *
 * <p>The reason is written first to {@value #REASON_FILE} in the runtime's state folder (framework
 * property {@code zrm.state.dir}, set by the launcher); the launcher reads it after the runtime
 * has ended, prints it and exits non-zero, so an orchestrator restarts the node and its log says
 * why. Without a state folder (a runtime not started by the launcher) the reason is only logged.
 */
final class FrameworkStop implements Consumer<String> {

    /** The file the launcher reads; keep in sync with the launcher's {@code RunCommand}. */
    static final String REASON_FILE = "runtime-stop-reason";

    private static final Logger LOG = LoggerFactory.getLogger(FrameworkStop.class);

    private final BundleContext context;
    /** Two terminal conditions may arrive together (a wedged backup stops the stream): the first reason wins. */
    private final java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();

    FrameworkStop(BundleContext context) {
        this.context = context;
    }

    @Override
    public void accept(String reason) {
        if (!stopping.compareAndSet(false, true)) {
            LOG.error("also: {}", reason);
            return;
        }
        String stateDir = context.getProperty("zrm.state.dir");
        if (stateDir != null && !stateDir.isBlank()) {
            Path file = Path.of(stateDir, REASON_FILE);
            try {
                Files.writeString(file, reason + "\n", StandardCharsets.UTF_8);
            } catch (IOException e) {
                LOG.error("cannot record the stop reason in {}: {}", file, e.toString());
            }
        }
        LOG.error("stopping the runtime: {}", reason);
        // Stopping the system bundle from a thread the framework may wait for (a component's) would
        // deadlock the shutdown: it gets a thread of its own.
        Thread t = new Thread(() -> {
            try {
                context.getBundle(0).stop();
            } catch (BundleException | IllegalStateException e) {
                LOG.error("stopping the framework failed: {}", e.toString(), e);
            }
        }, "zrm-runtime-stop");
        t.start();
    }
}
