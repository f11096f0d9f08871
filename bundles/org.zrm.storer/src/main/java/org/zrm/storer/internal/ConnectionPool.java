package org.zrm.storer.internal;

import org.zrm.config.PostgresUri;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.postgresql.Driver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changelog.ChangeLogException;
import org.zrm.secret.Secrets;

/**
 * A small bounded pool of pgjdbc connections to the change database.
 *
 * <p>At most {@code maxConns} connections exist; {@link #lease()} blocks while all are leased, for
 * at most {@code acquireTimeoutMs}, then fails (a leak or a stuck holder must surface as an error,
 * not as a hang). Idle connections are kept up to the same bound. Like upstream's pool, a
 * connection lives 300–600 s (random, so that a fleet doesn't reconnect in lock-step) and is
 * replaced when returned after that. Every connection uses application name
 * {@value #APPLICATION_NAME}: {@code terminateChangeDBLockHolders} of any Zero node recognises
 * change-streamer backends by it.
 */
public final class ConnectionPool implements AutoCloseable {

    public static final String APPLICATION_NAME = "zero-change-streamer";

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionPool.class);
    private static final long MIN_LIFETIME_MS = 300_000;
    private static final long MAX_LIFETIME_MS = 600_000;

    private final PostgresUri uri;
    private final String maskedUrl;
    private final Driver driver = new Driver();
    private final Semaphore permits;
    private final long acquireTimeoutMs;
    private final ArrayDeque<Idle> idle = new ArrayDeque<>();
    private boolean closed;

    private record Idle(Connection connection, long expiresAt) {
    }

    /**
     * @param changeDb the database URI
     * @param maxConns the connection bound
     * @param acquireTimeoutMs how long {@link #lease()} waits for a free connection
     */
    public ConnectionPool(String changeDb, int maxConns, long acquireTimeoutMs) {
        this.uri = PostgresUri.parse(changeDb, "change.db");
        this.maskedUrl = Secrets.maskUrls(changeDb);
        this.permits = new Semaphore(maxConns, true);
        this.acquireTimeoutMs = acquireTimeoutMs;
    }

    /** A leased connection; {@link #close()} returns it, {@link #discard()} closes it instead. */
    public final class Lease implements AutoCloseable {
        private final Connection connection;
        private final long expiresAt;
        private boolean broken;
        private boolean released;

        private Lease(Connection connection, long expiresAt) {
            this.connection = connection;
            this.expiresAt = expiresAt;
        }

        public Connection connection() {
            return connection;
        }

        /** Marks the connection unusable: it is closed instead of returned. */
        public void discard() {
            broken = true;
        }

        @Override
        public void close() {
            if (released) {
                return;
            }
            released = true;
            giveBack(connection, expiresAt, broken);
        }
    }

    /**
     * @return a connection in auto-commit mode
     * @throws ChangeLogException if none is free in time, the pool is closed, or connecting failed
     */
    public Lease lease() throws ChangeLogException {
        try {
            if (!permits.tryAcquire(acquireTimeoutMs, TimeUnit.MILLISECONDS)) {
                throw new ChangeLogException("no change-db connection free within " + acquireTimeoutMs
                        + " ms; all are in use");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ChangeLogException("interrupted while waiting for a change-db connection", e);
        }
        try {
            Idle reuse;
            synchronized (this) {
                if (closed) {
                    throw new ChangeLogException("change-db connection pool is closed");
                }
                reuse = idle.pollFirst();
            }
            if (reuse != null) {
                return new Lease(reuse.connection(), reuse.expiresAt());
            }
            return new Lease(open(), System.currentTimeMillis()
                    + ThreadLocalRandom.current().nextLong(MIN_LIFETIME_MS, MAX_LIFETIME_MS));
        } catch (ChangeLogException | RuntimeException e) {
            permits.release();
            throw e;
        }
    }

    /**
     * Opens a connection outside the pool's bound (for a lock-holder terminator that must run while
     * the pool may be exhausted by blocked backends). The caller closes it.
     */
    public Connection openUnpooled() throws ChangeLogException {
        return open();
    }

    private Connection open() throws ChangeLogException {
        Properties props = uri.connectionProperties();
        props.setProperty("ApplicationName", APPLICATION_NAME);
        props.setProperty("connectTimeout", "10");
        props.setProperty("tcpKeepAlive", "true");
        try {
            Connection c = driver.connect(uri.jdbcUrl(), props);
            if (c == null) {
                throw new ChangeLogException("pgjdbc did not accept change database URL " + maskedUrl);
            }
            return c;
        } catch (SQLException e) {
            throw new ChangeLogException("cannot connect to change database " + maskedUrl + ": "
                    + Secrets.maskUrls(String.valueOf(e.getMessage())), e);
        }
    }

    private void giveBack(Connection c, long expiresAt, boolean broken) {
        boolean keep = false;
        try {
            keep = !broken && System.currentTimeMillis() < expiresAt && !c.isClosed() && c.getAutoCommit();
        } catch (SQLException e) {
            LOG.debug("change-db connection unusable on return: {}", e.getMessage());
        }
        synchronized (this) {
            if (keep && !closed) {
                idle.addFirst(new Idle(c, expiresAt));
                c = null;
            }
        }
        if (c != null) {
            closeQuietly(c);
        }
        permits.release();
    }

    /** Closes idle connections; leased ones are closed when returned. */
    @Override
    public void close() {
        ArrayDeque<Idle> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayDeque<>(idle);
            idle.clear();
        }
        toClose.forEach(i -> closeQuietly(i.connection()));
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // The connection is being thrown away; the server ends the session either way.
            LOG.debug("closing change-db connection failed: {}", e.getMessage());
        }
    }
}
