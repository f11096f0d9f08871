package org.zrm.bench.e2e;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * A protocol-v6 subscriber, connecting as a zero-cache view-syncer does
 * ({@code /replication/v6/changes?...}) and acknowledging <em>every</em> {@code {"id":n,"msg":…}}
 * frame with its own {@code {"ack":n}} frame, in order, as soon as it has been read.
 *
 * <p><b>Why a minimal RFC 6455 client of its own.</b> This is the benchmark's measuring
 * instrument, so it must not be the bottleneck. The JDK's {@code java.net.http.WebSocket} allows
 * one outstanding send, so a client that acks every frame pays a full hand-off through the JDK's
 * selector thread per ack, which caps it near 10,000 frames/s on these machines; the reference
 * client (Node's {@code ws}, in zero-cache) writes its acks into the socket as fast as it reads.
 * Here one thread reads frames and queues their ack frames, and the acks are written in one
 * {@code write} whenever the socket has no further input buffered (or 16 KiB of acks are pending),
 * so they are on the wire before the reader next waits. Pings are answered with pongs.
 *
 * <p>Frames are not decoded with the full codec: the benchmark counts inserts and commits.
 *
 * <p><b>Reconnects as a view-syncer does.</b> When the server closes the socket with 1011 because
 * the subscriber fell more than {@code changeStreamer.subscriberMaxBufferedBytes} behind (the
 * slow-subscriber bound), the reader reconnects at the watermark of the last commit it received,
 * forgets the inserts of the transaction it was in the middle of, and goes on: the server replays
 * from the change log what follows that commit. With 50 subscribers and the benchmark's own clients
 * on the same 2 cores, one of them falling that far behind is expected, not a failure; the number
 * of reconnects is reported ({@link #reconnects()}). Any other close is an error.
 */
final class WsSubscriber implements AutoCloseable {

    private static final int ACK_FLUSH_BYTES = 16 * 1024;
    /** Reconnects allowed after the slow-subscriber bound before the run is failed. */
    private static final int MAX_RECONNECTS = 20;
    /** The configuration key the server names in the reason of a slow-subscriber close. */
    private static final String SLOW_SUBSCRIBER_BOUND = "subscriberMaxBufferedBytes";

    private final String name;
    private final int port;
    private final String replicaVersion;
    private final String mode;
    private final LongConsumer onInsertId;
    /** Where the message of every frame goes, for the minimal writer; {@code null} if not captured. */
    private final List<byte[]> capture;
    /** Replaced by the reader thread on a reconnect; read by {@link #close()}. */
    private volatile Socket socket;
    private InputStream in; // reader thread only, after the handshake
    private OutputStream out; // reader thread only, after the handshake
    private final ByteArrayOutputStream pendingAcks = new ByteArrayOutputStream(ACK_FLUSH_BYTES * 2);
    private final Object progress = new Object();
    private final Thread reader;

    private volatile long inserts;
    private volatile long commits;
    /** When the last {@code backfill-completed} change arrived (slow path only), or 0. */
    private volatile long backfillCompletedNanos;
    /** How many {@code backfill-completed} changes arrived; written by the reader thread only. */
    private volatile int backfillsCompleted;
    /** Inserts seen before the latest commit: the transactions those inserts belong to are complete. */
    private volatile long insertsAtLastCommit;
    private volatile long lastCommitNanos;
    private volatile String error;
    private volatile boolean closed;
    private volatile int reconnects;
    private volatile long frames;
    /** {@link #capture}'s size at the latest commit; reader thread only. */
    private int capturedAtLastCommit;
    private long lastInsertId = Long.MIN_VALUE; // reader thread only
    /** The watermark to resume from: the last commit's, or the one first connected at (reader thread only). */
    private String resumeAt;

    private WsSubscriber(String name, int port, String replicaVersion, String watermark, String mode,
            LongConsumer onInsertId, List<byte[]> capture) {
        this.name = name;
        this.capture = capture;
        this.port = port;
        this.replicaVersion = replicaVersion;
        this.resumeAt = watermark;
        this.mode = mode;
        this.onInsertId = onInsertId;
        this.reader = new Thread(this::readLoop, "bench-subscriber-" + name);
        reader.setDaemon(true);
    }

    /**
     * Connects, completes the WebSocket handshake and starts reading.
     *
     * @param onInsertId called, when a commit arrives, with the value of the first column
     *     ({@code id}) of the last row inserted before it, on the reader thread; {@code null} to skip
     *     parsing it
     */
    static WsSubscriber connect(int port, String id, String replicaVersion, String watermark, String mode,
            LongConsumer onInsertId) throws IOException {
        return start(new WsSubscriber(id, port, replicaVersion, watermark, mode, onInsertId, null));
    }

    /**
     * Connects like {@link #connect} in {@code serving} mode, and also appends the message of every
     * frame received ({@code <message>} of {@code {"id":n,"msg":<message>}}, the bytes as sent) to
     * {@code sink}, on the reader thread: the stream a {@link MinimalFanoutWriter} then replays.
     * Read {@code sink} only after {@link #close()}.
     */
    static WsSubscriber connectCapturing(int port, String id, String replicaVersion, String watermark,
            List<byte[]> sink) throws IOException {
        return start(new WsSubscriber(id, port, replicaVersion, watermark, "serving", null, sink));
    }

    private static WsSubscriber start(WsSubscriber s) throws IOException {
        s.open();
        s.reader.start();
        return s;
    }

    /** Opens a socket at {@link #resumeAt} and completes the handshake. */
    private void open() throws IOException {
        Socket next = new Socket();
        next.setTcpNoDelay(true);
        next.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        next.setSoTimeout(0);
        socket = next;
        if (closed) { // close() ran while connecting: it may have missed this socket
            next.close();
            throw new EOFException(name + ": closed");
        }
        String path = "/replication/v6/changes?taskID=&id=" + enc(name) + "&mode=" + mode + "&watermark="
                + enc(resumeAt) + "&replicaVersion=" + enc(replicaVersion) + "&initial=false";
        byte[] nonce = new byte[16];
        ThreadLocalRandom.current().nextBytes(nonce);
        String request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: " + Base64.getEncoder().encodeToString(nonce)
                + "\r\nSec-WebSocket-Version: 13\r\n\r\n";
        out = next.getOutputStream();
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        in = new BufferedInputStream(next.getInputStream(), 256 * 1024);
        String status = readHeaders();
        if (!status.startsWith("HTTP/1.1 101")) {
            next.close();
            throw new IOException(name + ": WebSocket upgrade refused: " + status);
        }
    }

    /**
     * After a slow-subscriber close: drops what the old connection left (unsent acks, the inserts of
     * the unfinished transaction) and resubscribes after the last commit received.
     */
    private void reconnect(String reason) throws IOException {
        if (++reconnects > MAX_RECONNECTS) {
            throw new IOException(name + ": more than " + MAX_RECONNECTS + " reconnects; last close: " + reason);
        }
        socket.close();
        pendingAcks.reset();
        inserts = insertsAtLastCommit;
        lastInsertId = Long.MIN_VALUE;
        if (capture != null) {
            capture.subList(capturedAtLastCommit, capture.size()).clear(); // they are sent again
        }
        open();
    }

    /** How often the server's slow-subscriber bound made this subscriber reconnect. */
    int reconnects() {
        return reconnects;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** Reads the handshake response up to the blank line; returns its status line. */
    private String readHeaders() throws IOException {
        StringBuilder line = new StringBuilder();
        String status = null;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException(name + ": connection closed during the WebSocket handshake");
            }
            if (b == '\n') {
                String l = line.toString().strip();
                if (status == null) {
                    status = l;
                } else if (l.isEmpty()) {
                    return status;
                }
                line.setLength(0);
            } else {
                line.append((char) b);
            }
        }
    }

    private void readLoop() {
        StringBuilder message = new StringBuilder();
        ByteArrayOutputStream fragments = new ByteArrayOutputStream();
        try {
            while (!closed) {
                int b0 = readByte();
                int b1 = readByte();
                boolean fin = (b0 & 0x80) != 0;
                int opcode = b0 & 0x0f;
                long len = b1 & 0x7f;
                if (len == 126) {
                    len = ((long) readByte() << 8) | readByte();
                } else if (len == 127) {
                    len = 0;
                    for (int i = 0; i < 8; i++) {
                        len = (len << 8) | readByte();
                    }
                }
                byte[] payload = in.readNBytes((int) len);
                if (payload.length != len) {
                    throw new EOFException("truncated frame");
                }
                switch (opcode) {
                    case 0x1, 0x0 -> {
                        boolean whole = fin && fragments.size() == 0 && opcode == 0x1;
                        if (whole) {
                            frames++;
                            captured(payload);
                            if (fastDataFrame(payload)) {
                                break;
                            }
                        }
                        fragments.write(payload);
                        if (fin) {
                            if (!whole) { // the last fragment of a fragmented message
                                frames++;
                                captured(fragments.toByteArray());
                            }
                            message.setLength(0);
                            message.append(fragments.toString(StandardCharsets.UTF_8));
                            fragments.reset();
                            frame(message.toString());
                        }
                    }
                    case 0x8 -> {
                        int code = payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
                        String reason = new String(payload, Math.min(2, payload.length),
                                Math.max(0, payload.length - 2), StandardCharsets.UTF_8);
                        if (code == 1011 && reason.contains(SLOW_SUBSCRIBER_BOUND) && !closed) {
                            reconnect(reason);
                            continue;
                        }
                        if (code != 1000) {
                            error = "closed " + code + " " + reason;
                        }
                        closed = true;
                    }
                    case 0x9 -> queueFrame(0xA, payload);
                    default -> { } // pong or reserved: nothing to do
                }
                if (in.available() == 0 || pendingAcks.size() >= ACK_FLUSH_BYTES) {
                    flushAcks();
                }
            }
        } catch (IOException e) {
            if (!closed) {
                error = String.valueOf(e);
            }
        } finally {
            closed = true;
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    private int readByte() throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new EOFException("connection closed");
        }
        return b;
    }

    /** Appends the message part of a frame's payload to {@link #capture}, if capturing. */
    private void captured(byte[] framePayload) {
        if (capture == null) {
            return;
        }
        int i = 6; // after {"id":
        while (framePayload[i] != ',') {
            i++;
        }
        int from = i + ",\"msg\":".length();
        capture.add(java.util.Arrays.copyOfRange(framePayload, from, framePayload.length - 1));
    }

    /** Text frames received, over all connections. */
    long frames() {
        return frames;
    }

    private static final byte[] DATA_PREFIX = ",\"msg\":[\"data\",{\"tag\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] INSERT = "insert\"".getBytes(StandardCharsets.US_ASCII);

    /**
     * Handles a {@code data} frame from its bytes, without decoding it to a string: with 50
     * subscribers in this JVM the client would otherwise spend most of the machine on decoding the
     * very frames the benchmark measures. Other frames (and inserts whose id is wanted) take the
     * general path.
     *
     * @return whether the frame was handled
     */
    private boolean fastDataFrame(byte[] p) {
        if (onInsertId != null || p.length < 7 || p[0] != '{' || p[5] != ':') {
            return false;
        }
        int i = 6;
        long id = 0;
        while (i < p.length && p[i] >= '0' && p[i] <= '9') {
            id = id * 10 + (p[i++] - '0');
        }
        if (i + DATA_PREFIX.length > p.length) {
            return false;
        }
        for (int k = 0; k < DATA_PREFIX.length; k++) {
            if (p[i + k] != DATA_PREFIX[k]) {
                return false;
            }
        }
        int tag = i + DATA_PREFIX.length;
        boolean insert = tag + INSERT.length <= p.length;
        for (int k = 0; insert && k < INSERT.length; k++) {
            insert = p[tag + k] == INSERT[k];
        }
        if (insert) {
            inserts++;
        }
        queueFrame(0x1, ("{\"ack\":" + id + "}").getBytes(StandardCharsets.US_ASCII));
        return true;
    }

    private void frame(String s) {
        long now = System.nanoTime();
        int comma = s.indexOf(',');
        long id = Long.parseLong(s, 6, comma, 10); // {"id":<n>,
        int typeStart = s.indexOf("\"msg\":[\"", comma) + 8;
        int typeEnd = s.indexOf('"', typeStart);
        String type = s.substring(typeStart, typeEnd);
        switch (type) {
            case "data" -> {
                if (s.startsWith("{\"tag\":\"backfill-completed\"", typeEnd + 2)) {
                    backfillCompletedNanos = now;
                    backfillsCompleted++;
                    synchronized (progress) {
                        progress.notifyAll();
                    }
                } else if (s.startsWith("{\"tag\":\"insert\"", typeEnd + 2)) {
                    inserts++;
                    if (onInsertId != null) {
                        int at = s.indexOf("\"new\":{", typeEnd);
                        int colon = s.indexOf(':', at + 7);
                        int end = colon + 1;
                        while (end < s.length() && (Character.isDigit(s.charAt(end)) || s.charAt(end) == '-')) {
                            end++;
                        }
                        lastInsertId = Long.parseLong(s, colon + 1, end, 10);
                    }
                }
            }
            case "commit" -> {
                int at = s.indexOf("\"watermark\":\"", typeEnd);
                if (at >= 0) {
                    int from = at + "\"watermark\":\"".length();
                    resumeAt = s.substring(from, s.indexOf('"', from));
                }
                lastCommitNanos = now;
                insertsAtLastCommit = inserts;
                capturedAtLastCommit = capture == null ? 0 : capture.size();
                commits++;
                if (onInsertId != null && lastInsertId != Long.MIN_VALUE) {
                    onInsertId.accept(lastInsertId);
                    lastInsertId = Long.MIN_VALUE;
                }
            }
            case "error" -> error = s;
            default -> {
                // begin, rollback, status: counted as frames only
            }
        }
        queueFrame(0x1, ("{\"ack\":" + id + "}").getBytes(StandardCharsets.US_ASCII));
        if (!"data".equals(type)) {
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    /** Appends one masked client frame (RFC 6455 §5.3) to the pending writes. */
    private void queueFrame(int opcode, byte[] payload) {
        byte[] mask = new byte[4];
        ThreadLocalRandom.current().nextBytes(mask);
        pendingAcks.write(0x80 | opcode);
        if (payload.length < 126) {
            pendingAcks.write(0x80 | payload.length);
        } else {
            pendingAcks.write(0x80 | 126);
            pendingAcks.write(payload.length >>> 8);
            pendingAcks.write(payload.length & 0xff);
        }
        pendingAcks.write(mask, 0, 4);
        for (int i = 0; i < payload.length; i++) {
            pendingAcks.write(payload[i] ^ mask[i & 3]);
        }
    }

    private void flushAcks() throws IOException {
        if (pendingAcks.size() > 0) {
            pendingAcks.writeTo(out);
            out.flush();
            pendingAcks.reset();
        }
    }

    /**
     * Waits until this subscriber has seen at least {@code minInserts} inserts and the commit that
     * follows the last of them.
     *
     * @return the {@link System#nanoTime()} at which that commit arrived
     * @throws IllegalStateException on an error frame or a closed connection
     */
    long awaitInserts(long minInserts, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (progress) {
            while (true) {
                if (error != null) {
                    throw new IllegalStateException(name + ": " + error);
                }
                if (insertsAtLastCommit >= minInserts) {
                    return lastCommitNanos;
                }
                if (closed) {
                    throw new IllegalStateException(name + ": connection closed after " + inserts + " inserts");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException(name + ": timed out with " + inserts + " of " + minInserts
                            + " inserts, " + commits + " commits");
                }
                progress.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }


    /**
     * Waits until {@code count} {@code backfill-completed} changes arrived. Only subscribers with an
     * insert-id callback see them (they read every frame on the general path).
     *
     * @return the {@link System#nanoTime()} of the last one's arrival
     */
    long awaitBackfillsCompleted(int count, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        synchronized (progress) {
            while (backfillsCompleted < count) {
                long left = deadline - System.nanoTime();
                if (error != null || left <= 0) {
                    throw new IllegalStateException("no backfill-completed within " + timeoutMillis + " ms"
                            + (error == null ? "" : ": " + error));
                }
                progress.wait(Math.max(1, left / 1_000_000L));
            }
        }
        return backfillCompletedNanos;
    }

    /** How many {@code backfill-completed} changes have arrived. */
    int backfillsCompleted() {
        return backfillsCompleted;
    }

    /** Closes the connection (the server sees the subscriber go away) and stops the reader. */
    @Override
    public void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException e) {
            error = error == null ? String.valueOf(e) : error;
        }
        try {
            reader.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
