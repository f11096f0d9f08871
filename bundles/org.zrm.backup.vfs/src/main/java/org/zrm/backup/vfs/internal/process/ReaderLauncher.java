package org.zrm.backup.vfs.internal.process;

import java.io.IOException;
import org.zrm.backup.vfs.internal.watermark.WireCodec;
import org.zrm.secret.Secrets;

/** Starts reader children: the command, the {@link ReaderEnvironment}, pipes for all three streams. */
public final class ReaderLauncher {

    /** Starts the configured process; tests wrap it to observe the processes. */
    @FunctionalInterface
    public interface ProcessStarter {
        Process start(ProcessBuilder builder) throws IOException;
    }

    private final ReaderCommand command;
    private final ReaderEnvironment environment;
    private final ProcessStarter starter;
    private final WireCodec codec = new WireCodec();
    private final int maxLineBytes;

    public ReaderLauncher(ReaderCommand command, ReaderEnvironment environment) {
        this(command, environment, ProcessBuilder::start, ReaderProcess.MAX_LINE_BYTES);
    }

    ReaderLauncher(ReaderCommand command, ReaderEnvironment environment, ProcessStarter starter, int maxLineBytes) {
        this.command = command;
        this.environment = environment;
        this.starter = starter;
        this.maxLineBytes = maxLineBytes;
    }

    WireCodec codec() {
        return codec;
    }

    /**
     * @return the started child, whose output is being read
     * @throws IOException if the command cannot be determined or started
     */
    ReaderProcess start() throws IOException {
        ProcessBuilder builder = new ProcessBuilder();
        command.configure(builder);
        environment.applyTo(builder.environment());
        try {
            return ReaderProcess.attach(starter.start(builder), codec, maxLineBytes);
        } catch (IOException e) {
            throw new IOException("cannot start the backup watermark reader "
                    + Secrets.maskUrls(String.join(" ", builder.command())) + ": " + e.getMessage(), e);
        }
    }
}
