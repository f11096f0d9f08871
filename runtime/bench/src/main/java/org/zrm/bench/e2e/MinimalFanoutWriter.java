package org.zrm.bench.e2e;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.zrm.protocol.subscriber.Frame;

/**
 * fanout-W4's limit: the least a WebSocket server can do to deliver the same frames to the same
 * clients on the same cores. It holds the messages ZRM sent for the workload (captured from one of
 * ZRM's subscribers, {@link WsSubscriber#connectCapturing}) and serves them to every client that
 * connects, with ZRM's framing ({@code {"id":n,"msg":<message>}}, ids from 1) and ZRM's ack window
 * (at most {@code maxUnackedChars} characters of frames sent and not yet acknowledged per
 * connection, the change-streamer endpoint's {@code send.maxUnackedChars} default; one larger frame
 * when nothing is outstanding). Nothing is
 * behind it: no source, storer, streamer, JSON or per-subscriber queue, only the bytes.
 *
 * <p>One thread per core, each with a selector over its share of the connections, writes as many
 * ready frames per {@code write} as fit a 256 KiB buffer. The difference between ZRM's rate and
 * this one is what ZRM's pipeline and send path cost on top of the clients' own share of the
 * machine, which the old single-subscriber limit could not separate.
 *
 * <p>What it leaves out of ZRM's rules on purpose: the streamer's consensus flow control (the
 * writer has every frame up front, so nothing can wait for a majority), and pings. ZRM pings
 * every 30 s, so once or twice in a 50-subscriber run; the pings cost little, but the first
 * clients' pongs are the first control frames ZRM's parser sees, and C2 compiles its read path
 * again then (docs/BENCHMARKS.md, session 22).
 */
final class MinimalFanoutWriter implements AutoCloseable {

    private static final String WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private static final int OUT_BUFFER_BYTES = 256 * 1024;
    private static final int IN_BUFFER_BYTES = 64 * 1024;
    /** A client's request line and headers; more is not a benchmark client. */
    private static final int MAX_HANDSHAKE_BYTES = 16 * 1024;

    private final byte[][] messages;
    /** {@code cumChars[i]}: characters of frames 1..i, as ZRM's send window counts them. */
    private final long[] cumChars;
    private final long maxUnackedChars;
    private final ServerSocketChannel server;
    private final List<Worker> workers = new ArrayList<>();
    private final Thread acceptor;
    private final AtomicLong framesSent = new AtomicLong();
    private volatile boolean closed;

    /**
     * Starts listening on 127.0.0.1 on a free port and serving.
     *
     * @param messages the message texts in stream order, UTF-8, without framing
     * @param maxUnackedChars the per-connection bound on characters sent and not yet acknowledged
     */
    MinimalFanoutWriter(List<byte[]> messages, long maxUnackedChars) throws IOException {
        this.messages = messages.toArray(new byte[0][]);
        this.maxUnackedChars = maxUnackedChars;
        this.cumChars = new long[this.messages.length + 1];
        for (int i = 0; i < this.messages.length; i++) {
            // The window counts the frame text's characters; the captured text is UTF-8, so count
            // its characters, not its bytes, as ZRM does.
            long msgChars = new String(this.messages[i], StandardCharsets.UTF_8).length();
            cumChars[i + 1] = cumChars[i] + prefix(i + 1).length + msgChars + 1;
        }
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
        for (int i = 0; i < threads; i++) {
            Worker w = new Worker(Selector.open(), "minimal-writer-" + i);
            workers.add(w);
            w.thread.start();
        }
        acceptor = new Thread(this::acceptLoop, "minimal-writer-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.socket().getLocalPort();
    }

    /** Frames written to all connections so far. */
    long framesSent() {
        return framesSent.get();
    }

    /** CPU nanoseconds the writer's threads (acceptor and workers) have used so far. */
    long cpuNanos() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long total = Math.max(0, mx.getThreadCpuTime(acceptor.getId()));
        for (Worker w : workers) {
            total += Math.max(0, mx.getThreadCpuTime(w.thread.getId()));
        }
        return total;
    }

    private void acceptLoop() {
        int next = 0;
        try {
            while (!closed) {
                SocketChannel ch = server.accept();
                ch.configureBlocking(false);
                ch.socket().setTcpNoDelay(true);
                Worker w = workers.get(next++ % workers.size());
                w.incoming.add(ch);
                w.selector.wakeup();
            }
        } catch (IOException e) {
            if (!closed) {
                throw new IllegalStateException("minimal writer: accept failed", e);
            }
        }
    }

    private static byte[] prefix(long id) {
        return Frame.prefix(id).getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        closed = true;
        server.close();
        for (Worker w : workers) {
            w.selector.close();
        }
        for (Worker w : workers) {
            w.thread.join(5_000);
        }
        acceptor.join(5_000);
    }

    /** One selector thread and its connections. */
    private final class Worker {
        final Selector selector;
        final Thread thread;
        final ConcurrentLinkedQueue<SocketChannel> incoming = new ConcurrentLinkedQueue<>();

        Worker(Selector selector, String name) {
            this.selector = selector;
            this.thread = new Thread(this::run, name);
            thread.setDaemon(true);
        }

        private void run() {
            try {
                while (!closed) {
                    selector.select();
                    for (SocketChannel ch; (ch = incoming.poll()) != null; ) {
                        ch.register(selector, SelectionKey.OP_READ, new Conn(ch));
                    }
                    for (SelectionKey key : selector.selectedKeys()) {
                        Conn c = (Conn) key.attachment();
                        try {
                            if (key.isValid() && key.isReadable()) {
                                c.read(key);
                            }
                            if (key.isValid() && (key.isWritable() || c.streaming)) {
                                c.write(key);
                            }
                        } catch (IOException e) {
                            // A benchmark client that went away (the run ends by closing them all).
                            key.cancel();
                            c.ch.close();
                        }
                    }
                    selector.selectedKeys().clear();
                }
            } catch (ClosedSelectorException e) {
                // close(): the run is over
            } catch (IOException e) {
                if (!closed) {
                    throw new IllegalStateException("minimal writer: selector failed", e);
                }
            }
        }
    }

    /** One client connection: its handshake, then the stream of frames and the acks. */
    private final class Conn {
        final SocketChannel ch;
        final ByteBuffer in = ByteBuffer.allocate(IN_BUFFER_BYTES);
        final ByteBuffer out = ByteBuffer.allocateDirect(OUT_BUFFER_BYTES);
        /** A frame larger than {@link #out}, being written; otherwise {@code null}. */
        ByteBuffer large;
        boolean streaming;
        /** Frames 1..{@code sent} were written into {@link #out}; 1..{@code acked} acknowledged. */
        int sent;
        int acked;

        Conn(SocketChannel ch) {
            this.ch = ch;
            out.flip(); // empty, ready to drain
        }

        void read(SelectionKey key) throws IOException {
            if (ch.read(in) < 0) {
                throw new IOException("client closed");
            }
            in.flip();
            if (!streaming) {
                handshake(key);
            } else {
                readFrames();
            }
            in.compact();
        }

        private void handshake(SelectionKey key) throws IOException {
            String request = StandardCharsets.ISO_8859_1.decode(in.duplicate()).toString();
            int end = request.indexOf("\r\n\r\n");
            if (end < 0) {
                if (in.remaining() >= MAX_HANDSHAKE_BYTES) {
                    throw new IOException("handshake too long");
                }
                return;
            }
            in.position(in.position() + end + 4);
            String wsKey = null;
            for (String line : request.substring(0, end).split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("sec-websocket-key")) {
                    wsKey = line.substring(colon + 1).trim();
                }
            }
            if (wsKey == null) {
                throw new IOException("not a WebSocket upgrade");
            }
            String response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: " + accept(wsKey) + "\r\n\r\n";
            ByteBuffer r = ByteBuffer.wrap(response.getBytes(StandardCharsets.US_ASCII));
            while (r.hasRemaining()) {
                ch.write(r); // 130 bytes into an empty socket buffer: one write in practice
            }
            streaming = true;
            key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        }

        /** Reads the masked client frames: acks settle the window, a close ends the connection. */
        private void readFrames() throws IOException {
            while (in.remaining() >= 2) {
                int start = in.position();
                int b0 = in.get(start) & 0xff;
                int b1 = in.get(start + 1) & 0xff;
                int len = b1 & 0x7f;
                int header = 2;
                if (len == 126) {
                    if (in.remaining() < 4) {
                        return;
                    }
                    len = ((in.get(start + 2) & 0xff) << 8) | (in.get(start + 3) & 0xff);
                    header = 4;
                } else if (len == 127) {
                    throw new IOException("client frame too large");
                }
                boolean masked = (b1 & 0x80) != 0;
                int total = header + (masked ? 4 : 0) + len;
                if (in.remaining() < total) {
                    return;
                }
                int opcode = b0 & 0x0f;
                if (opcode == 0x8) {
                    throw new IOException("client sent close");
                }
                if (opcode == 0x1) {
                    acked(parseAck(start + header, masked, len));
                }
                in.position(start + total);
            }
        }

        /** @return n of {@code {"ack":n}}, unmasked in place of reading */
        private long parseAck(int at, boolean masked, int len) throws IOException {
            int payload = at + (masked ? 4 : 0);
            long n = 0;
            int digits = 0;
            for (int i = 0; i < len; i++) {
                int b = in.get(payload + i) & 0xff;
                if (masked) {
                    b ^= in.get(at + (i & 3)) & 0xff;
                }
                if (b >= '0' && b <= '9') {
                    n = n * 10 + (b - '0');
                    digits++;
                }
            }
            if (digits == 0) {
                throw new IOException("not an ack");
            }
            return n;
        }

        private void acked(long id) throws IOException {
            if (id > sent || id < acked) {
                throw new IOException("ack " + id + " outside 1.." + sent);
            }
            acked = (int) id;
        }

        void write(SelectionKey key) throws IOException {
            while (true) {
                if (large != null) {
                    ch.write(large);
                    if (large.hasRemaining()) {
                        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        return;
                    }
                    large = null;
                }
                if (out.hasRemaining()) {
                    ch.write(out);
                    if (out.hasRemaining()) {
                        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        return;
                    }
                }
                if (!fill()) {
                    // Window full or all sent: wait for acks (the read side calls write again).
                    key.interestOps(SelectionKey.OP_READ);
                    return;
                }
            }
        }

        /** Puts as many next frames into {@link #out} as the window and the buffer allow. */
        private boolean fill() {
            out.clear();
            int added = 0;
            // ZRM's SendWindow rule: a frame fits if it stays within the bound, or if nothing is
            // outstanding (a frame larger than the whole bound could never be sent otherwise).
            while (sent < messages.length
                    && (sent == acked || cumChars[sent + 1] - cumChars[acked] <= maxUnackedChars)) {
                byte[] msg = messages[sent];
                byte[] prefix = prefix(sent + 1L);
                int payload = prefix.length + msg.length + 1;
                int header = payload < 126 ? 2 : payload <= 0xffff ? 4 : 10;
                if (header + payload > out.capacity()) {
                    if (added > 0) {
                        break; // send what is buffered first
                    }
                    large = ByteBuffer.allocate(header + payload);
                    frame(large, prefix, msg, payload);
                    large.flip();
                    sent++;
                    added++;
                    break;
                }
                if (header + payload > out.remaining()) {
                    break;
                }
                frame(out, prefix, msg, payload);
                sent++;
                added++;
            }
            out.flip();
            framesSent.addAndGet(added);
            return added > 0;
        }

        private void frame(ByteBuffer b, byte[] prefix, byte[] msg, int payload) {
            b.put((byte) 0x81);
            if (payload < 126) {
                b.put((byte) payload);
            } else if (payload <= 0xffff) {
                b.put((byte) 126).putShort((short) payload);
            } else {
                b.put((byte) 127).putLong(payload);
            }
            b.put(prefix).put(msg).put((byte) Frame.END);
        }
    }

    static String accept(String key) {
        try {
            byte[] sha1 = MessageDigest.getInstance("SHA-1").digest((key + WS_GUID).getBytes(StandardCharsets.US_ASCII));
            return Base64.getEncoder().encodeToString(sha1);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JVM", e);
        }
    }
}
