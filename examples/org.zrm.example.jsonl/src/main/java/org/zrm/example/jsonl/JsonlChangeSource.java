package org.zrm.example.jsonl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSource;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;
import org.zrm.replica.sync.StreamFedInitialSync;

/**
 * A {@link ChangeSource} whose upstream is a directory of JSON-lines change files (layout:
 * {@link ChangeDirectory}; tables: {@link DirectorySchema}; one transaction per line:
 * {@link TransactionLine}). A plain class: the DS component only constructs it from configuration,
 * so the tests construct it the same way.
 *
 * <p><b>SPI obligation: initial sync by the first transaction.</b> {@link #initialize(boolean)}
 * builds the replica through {@link StreamFedInitialSync}, so this source never touches SQLite:
 * it folds every complete line of every change file into the current rows, and feeds one
 * transaction (every table with its unique index, then every row) to a sync session. The
 * snapshot's watermark is the position of the last line folded, so the live stream continues
 * with exactly the next line. The fold holds the current rows in memory: this example suits data
 * that fits in the heap; a real source would snapshot from its store instead.
 *
 * <p><b>SPI obligation: reset-required.</b> A replica belongs to one directory history. Next to the
 * replica this source keeps {@code <replica>.jsonl-source} with the directory's {@code id} and a
 * digest of {@code schema.json} at sync time. If either differs later (the directory was
 * re-created, or its tables changed), or the files cannot serve the watermark to resume from,
 * {@link #initialize} or {@link #startStream} throws {@link AutoResetException}: ZRM discards the
 * replica (and its change log) and calls {@code initialize(true)}, which syncs afresh.
 *
 * <p><b>Threading.</b> ZRM calls {@code initialize} and {@code startStream} from one worker thread;
 * {@link #stop()} may come from any thread and closes the open stream.
 */
public final class JsonlChangeSource implements ChangeSource {

    private static final Logger LOG = LoggerFactory.getLogger(JsonlChangeSource.class);

    /**
     * What the source needs to know.
     *
     * @param directory the change directory
     * @param appId the app id, which names the tables Zero requires
     * @param shardNum the shard number
     * @param replicaFile the replica file ZRM keeps
     * @param maxLineBytes the longest line accepted
     * @param recheckInterval bound of one wait for the directory watch (see {@link JsonlChangeStream})
     */
    public record Settings(Path directory, String appId, int shardNum, Path replicaFile, int maxLineBytes,
            Duration recheckInterval) {}

    private final Settings settings;
    private final ChangeDirectory dir;
    private final String name;
    private final Messages messages = new Messages();
    private volatile JsonlChangeStream open;
    private volatile boolean stopped;

    /** @param settings the settings */
    public JsonlChangeSource(Settings settings) {
        this.settings = settings;
        this.dir = new ChangeDirectory(settings.directory());
        this.name = "jsonl change source " + dir.path();
    }

    /** @return the file that ties the replica to one directory history: {@code <replica>.jsonl-source} */
    static Path identityFile(Path replicaFile) {
        return replicaFile.resolveSibling(replicaFile.getFileName() + ".jsonl-source");
    }

    @Override
    public SubscriptionState initialize(boolean resetReplica) throws ChangeSourceException, InterruptedException {
        StreamFedInitialSync sync = new StreamFedInitialSync(name, settings.replicaFile(), settings.appId(),
                settings.shardNum(), List.of(), Map.of("source", "jsonl"));
        DirectorySchema schema = schema();
        Path identity = identityFile(settings.replicaFile());
        if (resetReplica) {
            sync.deleteReplica();
            deleteIdentity(identity);
        }
        Optional<SubscriptionState> existing = sync.existing();
        if (existing.isPresent()) {
            checkSameHistory(schema, existing.get().replicaVersion());
            LOG.info("{}: replica {} continues at {}", name, settings.replicaFile(), existing.get().watermark());
            return existing.get();
        }
        SubscriptionState state = snapshot(sync, schema);
        writeIdentity(identity, schema, state.replicaVersion());
        return state;
    }

    @Override
    public OptionalLong startLagReporter() {
        return OptionalLong.empty(); // files carry no commit times to measure lag against
    }

    @Override
    public ChangeStream startStream(String afterWatermark, List<BackfillRequest> backfillRequests)
            throws ChangeSourceException {
        if (stopped) {
            throw new ChangeSourceException(name + ": stopped");
        }
        DirectorySchema schema = schema();
        checkSameHistory(schema, null);
        Position after;
        try {
            after = Position.of(afterWatermark);
        } catch (IllegalArgumentException e) {
            throw new AutoResetException(name + ": cannot serve watermark " + afterWatermark + ": " + e.getMessage(), e);
        }
        // backfillRequests: this source never sends backfill fields, so ZRM records none to resume.
        JsonlChangeStream stream = new JsonlChangeStream(dir, schema, name, after, settings.maxLineBytes(),
                settings.recheckInterval());
        open = stream;
        if (stopped) {
            stream.close();
        }
        LOG.info("{}: streaming after {} ({})", name, afterWatermark, after);
        return stream;
    }

    @Override
    public void stop() {
        stopped = true;
        JsonlChangeStream s = open;
        if (s != null) {
            s.close();
        }
    }

    private DirectorySchema schema() throws ChangeSourceException {
        try {
            return DirectorySchema.read(dir, settings.appId(), settings.shardNum());
        } catch (BadInputException e) {
            throw new ChangeSourceException(name + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new ChangeSourceException(name + ": cannot read " + ChangeDirectory.SCHEMA + ": " + e.getMessage(), e);
        }
    }

    /** Folds the files into current rows and syncs the replica from them in one transaction. */
    private SubscriptionState snapshot(StreamFedInitialSync sync, DirectorySchema schema)
            throws ChangeSourceException, InterruptedException {
        Map<String, Map<String, ObjectNode>> rows = new LinkedHashMap<>();
        schema.tableNames().forEach(t -> rows.put(t, new LinkedHashMap<>()));
        Position last = Position.START;
        try {
            List<Integer> files = dir.changeFiles();
            for (int i = 0; i < files.size(); i++) {
                int f = files.get(i);
                if (f != i + 1) {
                    throw new ChangeSourceException(name + ": initial sync needs every change file from "
                            + ChangeDirectory.fileName(1) + ", but " + ChangeDirectory.fileName(i + 1) + " is missing");
                }
                try (LineReader reader = new LineReader(dir.changeFile(f), settings.maxLineBytes())) {
                    for (String line; (line = reader.next()) != null;) {
                        fold(rows, TransactionLine.parse(line, reader.where(reader.lineNumber()), schema));
                        last = new Position(f, reader.lineNumber());
                    }
                    if (reader.hasPartialLine() && i < files.size() - 1) {
                        throw new BadInputException(reader.where(reader.lineNumber() + 1) + ": the last line has no"
                                + " newline, but a later file exists");
                    }
                }
            }
        } catch (BadInputException e) {
            throw new ChangeSourceException(name + ": initial sync: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new ChangeSourceException(name + ": initial sync: cannot read " + dir.path() + ": " + e.getMessage(), e);
        }
        String watermark = last.watermark();
        LOG.info("{}: initial sync of the files up to {} at watermark {}", name, last, watermark);
        try (StreamFedInitialSync.Session session = sync.open()) {
            session.accept(messages.begin(watermark));
            for (DirectorySchema.Table t : schema.tables().values()) {
                session.accept(messages.createTable(t));
                session.accept(messages.createIndex(t));
            }
            for (DirectorySchema.Table t : schema.tables().values()) {
                for (ObjectNode row : rows.get(t.qualifiedName()).values()) {
                    session.accept(messages.data(new TransactionLine.RowChange(TransactionLine.Op.INSERT, t, row)));
                }
            }
            return session.accept(messages.commit(watermark)).orElseThrow(() ->
                    new ChangeSourceException(name + ": the sync session did not complete at the snapshot's commit"));
        }
    }

    private static void fold(Map<String, Map<String, ObjectNode>> rows, TransactionLine tx) {
        for (TransactionLine.RowChange c : tx.changes()) {
            Map<String, ObjectNode> table = rows.get(c.table().qualifiedName());
            String key = key(c);
            if (c.op() == TransactionLine.Op.DELETE) {
                table.remove(key);
            } else {
                table.put(key, c.values());
            }
        }
    }

    private static String key(TransactionLine.RowChange c) {
        StringBuilder sb = new StringBuilder();
        try {
            for (String k : c.table().primaryKey()) {
                sb.append(DirectorySchema.MAPPER.writeValueAsString(c.values().get(k))).append('\u0000');
            }
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a parsed value: " + e.getMessage(), e);
        }
        return sb.toString();
    }

    /**
     * Checks that the directory is still the one the replica was synced from.
     *
     * @param replicaVersion the replica's version, checked too when not null
     */
    private void checkSameHistory(DirectorySchema schema, String replicaVersion) throws ChangeSourceException {
        Path file = identityFile(settings.replicaFile());
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new AutoResetException(name + ": the replica " + settings.replicaFile()
                    + " was not synced from this source (no " + file.getFileName() + ")", e);
        } catch (IOException e) {
            throw new ChangeSourceException(name + ": cannot read " + file + ": " + e.getMessage(), e);
        }
        if (!schema.id().equals(p.getProperty("id"))) {
            throw new AutoResetException(name + ": the directory's id is now \"" + schema.id()
                    + "\", the replica was synced from \"" + p.getProperty("id") + "\" (the directory was re-created)");
        }
        if (!schema.fingerprint().equals(p.getProperty("schema"))) {
            throw new AutoResetException(name + ": " + ChangeDirectory.SCHEMA + " changed since the replica was synced;"
                    + " a new initial sync applies it");
        }
        if (replicaVersion != null && !replicaVersion.equals(p.getProperty("replicaVersion"))) {
            throw new AutoResetException(name + ": the replica is at version " + replicaVersion + ", "
                    + file.getFileName() + " names " + p.getProperty("replicaVersion"));
        }
    }

    private void writeIdentity(Path file, DirectorySchema schema, String replicaVersion) throws ChangeSourceException {
        Properties p = new Properties();
        p.setProperty("id", schema.id());
        p.setProperty("schema", schema.fingerprint());
        p.setProperty("replicaVersion", replicaVersion);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                p.store(w, "written by the jsonl example change source: the directory this replica was synced from");
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // The replica exists but is not tied to the directory: the next initialize re-syncs it.
            throw new ChangeSourceException(name + ": cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private void deleteIdentity(Path file) throws ChangeSourceException {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new ChangeSourceException(name + ": cannot delete " + file + ": " + e.getMessage(), e);
        }
    }
}
