package org.zrm.pgcluster.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.zrm.pgcluster.PgClusterException;

/**
 * The OS account the server runs as. PostgreSQL refuses to run as root, so when this JVM is root
 * every tool runs as {@code postgres} through {@code runuser}, and the data folder is owned by it.
 */
public final class OsAccount {
    /** The account used when the JVM runs as root. */
    public static final String DEFAULT_SERVICE_USER = "postgres";
    private static final List<Path> SBIN_DIRS = List.of(Path.of("/usr/sbin"), Path.of("/sbin"), Path.of("/usr/bin"), Path.of("/bin"));

    private final String user;      // null: run as the JVM's own user
    private final String runuser;   // path of runuser(1), set iff user != null

    private OsAccount(String user, String runuser) {
        this.user = user;
        this.runuser = runuser;
    }

    /**
     * @param override an explicit account, or {@code null} to use {@value #DEFAULT_SERVICE_USER}
     *     when running as root and the current user otherwise
     * @param currentUser the JVM's user name ({@code user.name}, which the JDK takes from the uid)
     */
    public static OsAccount choose(String override, String currentUser) {
        String user = override != null ? override : "root".equals(currentUser) ? DEFAULT_SERVICE_USER : null;
        if (user == null || user.equals(currentUser)) {
            return new OsAccount(null, null);
        }
        String runuser = SBIN_DIRS.stream().map(d -> d.resolve("runuser")).filter(Files::isExecutable)
                .findFirst().map(Path::toString)
                .orElseThrow(() -> new PgClusterException("runuser(1) not found in " + SBIN_DIRS
                        + "; it is needed to run PostgreSQL as '" + user + "' (PostgreSQL refuses to run as root)."
                        + " Install it with `apt-get install -y util-linux`."));
        return new OsAccount(user, runuser);
    }

    /** @return the account tools run as, or empty for the JVM's own account */
    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /** @return {@code command}, prefixed so that it runs as this account */
    public List<String> wrap(List<String> command) {
        if (user == null) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of(runuser, "-u", user, "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Makes this account the owner of {@code path} (user and primary group); a no-op for the own account. */
    public void own(Path path) {
        if (user == null) {
            return;
        }
        try {
            UserPrincipalLookupService lookup = path.getFileSystem().getUserPrincipalLookupService();
            UserPrincipal owner = lookup.lookupPrincipalByName(user);
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            view.setOwner(owner);
            GroupPrincipal group = lookup.lookupPrincipalByGroupName(user);
            view.setGroup(group);
        } catch (UserPrincipalNotFoundException e) {
            throw new PgClusterException("OS user or group '" + user + "' does not exist; PostgreSQL refuses to run as"
                    + " root and needs it. `apt-get install -y postgresql-15` creates it.", e);
        } catch (IOException e) {
            throw new PgClusterException("cannot give " + path + " to OS user '" + user + "': " + e.getMessage(), e);
        }
    }

    /**
     * Fails early, with advice, when this account could not even reach {@code dir}: every parent
     * folder must be searchable by it, otherwise initdb fails with a bare "permission denied".
     */
    public void checkCanReach(Path dir) {
        if (user == null) {
            return;
        }
        for (Path p = dir.toAbsolutePath().getParent(); p != null; p = p.getParent()) {
            try {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
                boolean ownedByUser = user.equals(Files.getOwner(p).getName());
                if (!perms.contains(PosixFilePermission.OTHERS_EXECUTE) && !ownedByUser) {
                    throw new PgClusterException("OS user '" + user + "' cannot reach " + dir + " because " + p
                            + " is not searchable by others; run `chmod o+x " + p + "` or choose a folder elsewhere.");
                }
            } catch (IOException e) {
                throw new PgClusterException("cannot inspect " + p + ": " + e.getMessage(), e);
            }
        }
    }

    @Override
    public String toString() {
        return user == null ? "the current OS user" : "OS user '" + user + "'";
    }
}
