package org.zrm.backup.vfs.internal.process;

import java.io.IOException;
import java.util.List;

/**
 * The command that starts a reader child: by default a JVM running
 * {@link org.zrm.backup.vfs.internal.reader.VfsWatermarkReaderMain}
 * ({@link DefaultReaderCommand}); {@code litestream.vfsReaderCommand} replaces it entirely
 * ({@link #of(List)}), which tests use to run fake children and operators may use to run the
 * reader differently. Any replacement must speak the {@code ready}/request/response JSON lines on
 * stdin/stdout and gets the {@link ReaderEnvironment} variables.
 */
public interface ReaderCommand {

    /**
     * Sets the command (and any variables of its own) on {@code builder}; called for every start.
     *
     * @throws IOException if the command cannot be determined (e.g. a jar cannot be located)
     */
    void configure(ProcessBuilder builder) throws IOException;

    /** @return a command that runs exactly {@code words} */
    static ReaderCommand of(List<String> words) {
        if (words.isEmpty()) {
            throw new IllegalArgumentException("empty reader command");
        }
        List<String> command = List.copyOf(words);
        return builder -> builder.command(command);
    }
}
