package org.zrm.example.jsonl;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStream;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.protocol.ChangeSourceUpstream;
import org.zrm.protocol.ChangeStreamMessage;

/**
 * The live stream: the transactions of the change files after a position, one line at a time.
 *
 * <p><b>SPI obligation: bounded, pull-based.</b> Nothing reads ahead. The consumer's
 * {@link #take()} reads the next complete line itself, so the source holds at most one
 * transaction's messages plus one line's bytes ({@link LineReader}); a slow consumer simply reads
 * the files later.
 *
 * <p><b>Waiting for new lines.</b> When the files hold no further complete line, the consumer
 * waits on a {@link WatchService} of the directory (file created or modified), which wakes it as
 * soon as the writer appends. The wait is bounded by {@code recheckInterval}, because a watch
 * service may miss events (an overflow, or a platform whose watch service polls slowly); after
 * the bound the files are read again, so a missed event delays a line by at most that interval.
 * {@link #close()} closes the watch service, which wakes a waiting consumer at once.
 *
 * <p><b>SPI obligation: acks.</b> {@link #ack} only records the position (it must not block); the
 * consumer thread writes it to {@code acked.json} before it reads on, so an ack reaches the file
 * within one {@code recheckInterval}. A position that is not acked is never reported, and a
 * restart streams from the change log's position, not from {@code acked.json}.
 *
 * <p><b>Bad input.</b> A line that is not a valid transaction ends the stream with a
 * {@link ChangeSourceException} naming the file and line, before any of its messages is handed
 * out. ZRM retries with back-off from its last stored transaction and meets the same line again,
 * until the line is fixed: nothing after it is skipped or lost.
 */
final class JsonlChangeStream implements ChangeStream {

    private static final Logger LOG = LoggerFactory.getLogger(JsonlChangeStream.class);

    private final ChangeDirectory dir;
    private final DirectorySchema schema;
    private final String name;
    private final int maxLineBytes;
    private final Duration recheckInterval;
    private final Messages messages = new Messages();
    private final WatchService watch;
    private final ArrayDeque<ChangeStreamMessage> pending = new ArrayDeque<>(); // one transaction at most
    private final AtomicReference<Position> acked = new AtomicReference<>(Position.START);
    private Position ackWritten = Position.START;
    private int file;
    private LineReader reader;
    private ChangeSourceException failure;
    private volatile boolean closed;

    /**
     * Positions the stream just after {@code after}.
     *
     * @throws AutoResetException if the files cannot serve {@code after} (see
     *     {@link #openAfter(Position)})
     * @throws ChangeSourceException if the directory cannot be read
     */
    JsonlChangeStream(ChangeDirectory dir, DirectorySchema schema, String name, Position after, int maxLineBytes,
            Duration recheckInterval) throws ChangeSourceException {
        this.dir = dir;
        this.schema = schema;
        this.name = name;
        this.maxLineBytes = maxLineBytes;
        this.recheckInterval = recheckInterval;
        try {
            this.watch = dir.path().getFileSystem().newWatchService();
            dir.path().register(watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
        } catch (IOException e) {
            throw new ChangeSourceException(name + ": cannot watch " + dir.path() + ": " + e.getMessage(), e);
        }
        try {
            openAfter(after);
        } catch (ChangeSourceException | RuntimeException e) {
            close();
            closeReader();
            throw e;
        }
    }

    /**
     * <b>SPI obligation: reset-required.</b> The stream must start right after {@code after}, or
     * not at all. It can when the file holding {@code after} still has that line, or when that
     * file was removed (so it was fully acked, see {@link ChangeDirectory}) and the next one is
     * the oldest present. Anything else (the file is shorter than the watermark says, files are
     * missing, the directory was emptied) means this history cannot continue the replica, and the
     * answer is {@link AutoResetException}: ZRM discards its replica and syncs it again.
     */
    private void openAfter(Position after) throws ChangeSourceException {
        try {
            List<Integer> files = dir.changeFiles();
            if (after.equals(Position.START)) {
                if (!files.isEmpty() && files.get(0) != 1) {
                    throw new AutoResetException(name + ": cannot stream from the start: "
                            + ChangeDirectory.fileName(1) + " is gone (oldest is " + ChangeDirectory.fileName(files.get(0)) + ")");
                }
                file = 1;
                return;
            }
            if (files.contains(after.file())) {
                file = after.file();
                reader = new LineReader(dir.changeFile(file), maxLineBytes);
                while (reader.lineNumber() < after.line()) {
                    if (reader.next() == null) {
                        throw new AutoResetException(name + ": cannot serve watermark " + after.watermark() + " (" + after
                                + "): " + ChangeDirectory.fileName(file) + " has only " + reader.lineNumber()
                                + " complete lines; it was truncated or replaced");
                    }
                }
                return;
            }
            if (!files.isEmpty() && files.get(0) == after.file() + 1) {
                file = after.file() + 1; // the acked file was removed; its successor starts at line 1
                return;
            }
            throw new AutoResetException(name + ": cannot serve watermark " + after.watermark() + " (" + after + "): "
                    + ChangeDirectory.fileName(after.file()) + " is gone and " + ChangeDirectory.fileName(after.file() + 1)
                    + " is not the oldest file" + (files.isEmpty() ? " (no change files)" : ""));
        } catch (BadInputException e) {
            throw new ChangeSourceException(name + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new ChangeSourceException(name + ": cannot read " + dir.path() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public ChangeStreamMessage take() throws ChangeSourceException, InterruptedException {
        while (true) {
            ChangeStreamMessage m = next(recheckInterval);
            if (m != null) {
                return m;
            }
        }
    }

    @Override
    public ChangeStreamMessage poll(Duration timeout) throws ChangeSourceException, InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        while (true) {
            long left = deadline - System.nanoTime();
            ChangeStreamMessage m = next(Duration.ofNanos(Math.max(0, Math.min(left, recheckInterval.toNanos()))));
            if (m != null || left <= 0) {
                return m;
            }
        }
    }

    /** The next message, or null after waiting up to {@code wait} for the files to grow. */
    private synchronized ChangeStreamMessage next(Duration wait) throws ChangeSourceException, InterruptedException {
        if (failure != null) {
            throw failure;
        }
        if (closed) {
            closeReader();
            throw new ChangeStreamClosedException(name + ": stream closed");
        }
        writeAck();
        if (pending.isEmpty()) {
            try {
                readLine();
            } catch (BadInputException e) {
                throw fail(new ChangeSourceException(name + ": " + e.getMessage(), e));
            } catch (IOException e) {
                throw fail(new ChangeSourceException(name + ": cannot read " + dir.path() + ": " + e.getMessage(), e));
            }
        }
        if (!pending.isEmpty()) {
            return pending.poll();
        }
        awaitChange(wait);
        return null;
    }

    /** Reads the next complete line, if any, into {@link #pending}; moves to the next file at the end of one. */
    private void readLine() throws IOException {
        while (true) {
            if (reader == null) {
                if (!Files.exists(dir.changeFile(file))) {
                    return;
                }
                reader = new LineReader(dir.changeFile(file), maxLineBytes);
            }
            String line = reader.next();
            if (line == null && Files.exists(dir.changeFile(file + 1))) {
                // The writer finishes a file before it creates the next; read once more in case the
                // last line's newline landed between the read and the check.
                line = reader.next();
                if (line == null) {
                    if (reader.hasPartialLine()) {
                        throw new BadInputException(reader.where(reader.lineNumber() + 1) + ": the last line has no"
                                + " newline, but " + ChangeDirectory.fileName(file + 1) + " exists (a file must be"
                                + " complete before the next one is started)");
                    }
                    reader.close();
                    reader = null;
                    file++;
                    continue;
                }
            }
            if (line == null) {
                return;
            }
            Position at = new Position(file, reader.lineNumber());
            TransactionLine tx = TransactionLine.parse(line, reader.where(at.line()), schema);
            pending.addAll(messages.transaction(at.watermark(), tx));
            return;
        }
    }

    private void awaitChange(Duration wait) throws InterruptedException, ChangeStreamClosedException {
        try {
            WatchKey key = watch.poll(wait.toNanos(), TimeUnit.NANOSECONDS);
            if (key != null) {
                key.pollEvents(); // which file changed does not matter: the files are read again
                key.reset();
            }
        } catch (ClosedWatchServiceException e) {
            closeReader();
            throw new ChangeStreamClosedException(name + ": stream closed");
        }
    }

    private void writeAck() {
        Position a = acked.get();
        if (a.compareTo(ackWritten) > 0) {
            try {
                dir.writeAcked(schema.id(), a);
                ackWritten = a;
            } catch (IOException e) {
                // Not fatal: acked.json only tells the writer what it may delete; it is retried next time.
                LOG.warn("{}: cannot write {} (retried later): {}", name, ChangeDirectory.ACKED, e.toString());
            }
        }
    }

    private ChangeSourceException fail(ChangeSourceException e) {
        failure = e;
        closeReader();
        return e;
    }

    private void closeReader() {
        if (reader != null) {
            try {
                reader.close();
            } catch (IOException e) {
                LOG.warn("{}: closing {}: {}", name, ChangeDirectory.fileName(file), e.toString());
            }
            reader = null;
        }
    }

    @Override
    public void ack(ChangeSourceUpstream ack) {
        Position p;
        try {
            p = Position.of(ack.watermark());
        } catch (IllegalArgumentException e) {
            // This source sends no status messages, so every ack names one of its commits.
            LOG.warn("{}: ignoring an ack of a watermark this source never sent: {}", name, e.getMessage());
            return;
        }
        acked.accumulateAndGet(p, (x, y) -> x.compareTo(y) >= 0 ? x : y);
    }

    @Override
    public void close() {
        closed = true;
        try {
            watch.close(); // wakes a consumer waiting in awaitChange
        } catch (IOException e) {
            LOG.warn("{}: closing the directory watch: {}", name, e.toString());
        }
        // The reader is closed by the consumer's thread only: close() may run while it reads.
    }
}
