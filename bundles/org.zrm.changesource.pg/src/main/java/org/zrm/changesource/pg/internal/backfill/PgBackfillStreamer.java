package org.zrm.changesource.pg.internal.backfill;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.pg.internal.setup.PublicationInfo;
import org.zrm.changesource.pg.internal.setup.UnsupportedTableSchemaException;
import org.zrm.changesource.pg.internal.sync.PgConnector;
import org.zrm.changesource.pg.internal.sync.ReplicationSlots;
import org.zrm.changesource.pg.internal.types.PgTypeCatalog;
import org.zrm.protocol.BackfillRequest;

/**
 * The Postgres {@link BackfillStreamer} (upstream {@code streamBackfill}, spec §5.6 and Appendix
 * B): each run takes a snapshot at a known LSN through a temporary slot
 * ({@link SnapshotTransaction}), validates the request against the published schema inside it
 * ({@link BackfillSchemaValidator}) and then reads the row-key and backfill columns with COPY on
 * demand ({@link PgBackfillRun}).
 *
 * <p>One streamer serves one replica: its slot name prefixes the snapshot slots, and its
 * publications are the shard's. Thread-safe; each run has its own connections.
 */
public final class PgBackfillStreamer implements BackfillStreamer {

    private static final Logger LOG = LoggerFactory.getLogger(PgBackfillStreamer.class);

    /** The snapshot connection's application name, as zero-cache's. */
    static final String APPLICATION_NAME = "zero-backfill-stream";

    private final PgConnector connector;
    private final String slot;
    private final List<String> publications;
    private final BackfillStreamOptions options;
    private final Clock clock;

    /**
     * @param slot the replica's replication slot
     * @param publications the shard's publications (the replica's, as at initial sync)
     */
    public PgBackfillStreamer(PgConnector connector, String slot, List<String> publications,
            BackfillStreamOptions options) {
        this(connector, slot, publications, options, Clock.systemUTC());
    }

    PgBackfillStreamer(PgConnector connector, String slot, List<String> publications, BackfillStreamOptions options,
            Clock clock) {
        this.connector = Objects.requireNonNull(connector, "connector");
        this.slot = Objects.requireNonNull(slot, "slot");
        this.publications = List.copyOf(publications);
        this.options = Objects.requireNonNull(options, "options");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public BackfillRun open(BackfillRequest request) throws ChangeSourceException, InterruptedException {
        // Malformed metadata fails before anything is opened upstream.
        BackfillSchemaValidator.metadata(request);
        String label = request.table().schema() + "." + request.table().name();
        Connection conn;
        try {
            conn = connector.connect(APPLICATION_NAME);
        } catch (SQLException e) {
            throw new ChangeSourceException("Backfill of " + label + ": cannot connect upstream: " + e.getMessage(), e);
        }
        boolean opened = false;
        try {
            String watermark = SnapshotTransaction.begin(connector, conn, slot, options.slotCreateTimeout(), clock);
            PublicationInfo info = PublicationInfo.read(conn, publications);
            BackfillSchemaValidator.Validated backfill = BackfillSchemaValidator.validate(request, info.schema());
            PgTypeCatalog catalog = PgTypeCatalog.load(conn);
            BackfillCopyReader reader = new BackfillCopyReader(backfill.table(), backfill.copyColumns(), catalog,
                    options.textCopy());
            PgBackfillRun run = new PgBackfillRun(request, conn, watermark, backfill, reader,
                    options.flushThresholdBytes());
            opened = true;
            return run;
        } catch (SQLException e) {
            throw PgBackfillRun.translate(request, label, e);
        } catch (UnsupportedTableSchemaException e) {
            // A table published with different column lists by two publications: retried, like
            // any upstream failure, until the publications agree again.
            throw new ChangeSourceException("Backfill of " + label + ": " + e.getMessage(), e);
        } finally {
            if (!opened) {
                closeQuietly(conn, label);
            }
        }
    }

    /**
     * Drops the inactive snapshot slots {@code {slot}_bf_*} that a crashed run or a zero-cache left
     * behind. Call it when the source starts, before the first backfill; a live run's slot is
     * active and never dropped.
     *
     * @return the dropped slots' names
     */
    public List<String> dropOrphanedSlots() throws ChangeSourceException {
        try (Connection conn = connector.connect("zero-backfill-slot-cleanup")) {
            return ReplicationSlots.dropOrphanedSnapshotSlots(conn, slot);
        } catch (SQLException e) {
            throw new ChangeSourceException("slot=" + slot + ": could not drop orphaned backfill slots: "
                    + e.getMessage(), e);
        }
    }

    private static void closeQuietly(Connection conn, String label) {
        try {
            conn.close();
        } catch (SQLException e) {
            // Closing after a failure: the failure is what the caller sees; the server ends the
            // session (and its transaction) when the socket goes away.
            LOG.warn("backfill {}: error closing the snapshot connection: {}", label, e.toString());
        }
    }
}
