package org.zrm.backup.vfs.internal.reader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import org.sqlite.SQLiteConfig;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;

/**
 * Reads the backed-up watermark through the Litestream VFS (upstream
 * {@code VfsBackupWatermarkReader}). Runs only in the reader child process: the extension is
 * native code whose configuration is the process environment ({@code LITESTREAM_REPLICA_URL},
 * {@code LITESTREAM_LOG_LEVEL}, {@code LITESTREAM_LOG_FILE}, set by the parent when it starts the
 * child), read when the extension is loaded.
 */
public final class VfsWatermarkReader implements WatermarkSource {

    /** The database the VFS serves; the file name is arbitrary, the replica URL selects the database. */
    public static final String DATABASE_URI = "file:zero-backup.db?vfs=litestream&mode=ro";

    private final Connection loader;
    private final Connection db;
    private final WatermarkQuery query;

    private VfsWatermarkReader(Connection loader, Connection db, WatermarkQuery query) {
        this.loader = loader;
        this.db = db;
        this.query = query;
    }

    /**
     * Loads the extension (which registers the {@code litestream} VFS process-wide) through a
     * throwaway in-memory connection, then opens {@code databaseUri} read-only and prepares the
     * query.
     *
     * @param extensionPath {@code litestream.vfsExtensionPath}
     * @param databaseUri normally {@link #DATABASE_URI}
     * @param clock stamps {@code observedAtMs}
     * @throws NoSuchFileException naming the path if the extension does not exist
     * @throws SQLException naming the path if SQLite cannot load it, or if the database or the query
     *     cannot be opened
     */
    public static VfsWatermarkReader open(Path extensionPath, String databaseUri, Clock clock)
            throws IOException, SQLException {
        if (!Files.isRegularFile(extensionPath)) {
            throw new NoSuchFileException(extensionPath.toString(), null,
                    "litestream VFS extension not found (litestream.vfsExtensionPath)");
        }
        SQLiteConfig loaderConfig = new SQLiteConfig();
        loaderConfig.enableLoadExtension(true);
        Connection loader = loaderConfig.createConnection("jdbc:sqlite::memory:");
        Connection db = null;
        try {
            try (PreparedStatement load = loader.prepareStatement("SELECT load_extension(?)")) {
                load.setString(1, extensionPath.toString());
                load.executeQuery().close();
            } catch (SQLException e) {
                throw new SQLException("cannot load litestream VFS extension " + extensionPath + ": " + e.getMessage(),
                        e);
            }
            SQLiteConfig dbConfig = new SQLiteConfig();
            dbConfig.setReadOnly(true);
            db = dbConfig.createConnection("jdbc:sqlite:" + databaseUri);
            return new VfsWatermarkReader(loader, db, new WatermarkQuery(db, clock));
        } catch (SQLException | RuntimeException e) {
            closeQuietly(db, e);
            closeQuietly(loader, e);
            throw e;
        }
    }

    @Override
    public BackupWatermark readWatermark() throws SQLException {
        return query.read();
    }

    @Override
    public void close() {
        SQLException failure = null;
        for (AutoCloseable c : new AutoCloseable[] {query, db, loader}) {
            try {
                c.close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = new SQLException("closing the VFS reader failed", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            // the child exits right after closing; the message reaches the parent's log via stderr
            System.err.println("vfs reader: " + failure + (failure.getCause() == null ? "" : ": " + failure.getCause()));
        }
    }

    private static void closeQuietly(Connection c, Exception primary) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException e) {
            primary.addSuppressed(e);
        }
    }
}
