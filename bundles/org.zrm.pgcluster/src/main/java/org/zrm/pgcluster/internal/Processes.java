package org.zrm.pgcluster.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Questions about other OS processes that the JDK's ProcessHandle cannot answer. */
public final class Processes {
    private Processes() {}

    /**
     * Whether {@code pid} is alive and is a PostgreSQL server process. A {@code postmaster.pid} left
     * by a crash or a container restart may name a pid that now belongs to an unrelated process;
     * pg_ctl and the postmaster only check that the pid is alive, which would wrongly report
     * "another server is running".
     */
    public static boolean isPostgresProcess(long pid) {
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            Path comm = Path.of("/proc", Long.toString(pid), "comm");
            try {
                return Files.readString(comm, StandardCharsets.UTF_8).strip().startsWith("postgres");
            } catch (NoSuchFileException e) {
                return false;  // exited meanwhile
            } catch (IOException e) {
                return true;   // cannot tell (no /proc): trust pg_ctl, which says it is alive
            }
        }
        return false;
    }
}
