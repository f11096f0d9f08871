package org.zrm.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on the loopback address for network faults a test injects between a client and a
 * server: a connection that goes silent in one direction ({@link #stallServerToClient}), a
 * network that drops everything in both directions ({@link #blackhole}), or a server that is gone
 * ({@link #refuse}); {@link #heal} ends the last two.
 *
 * <p>While black-holed, the proxy stops reading from both sides, so each sender's socket buffer
 * fills and its writes block, and no byte, FIN or RST reaches the other side: what a silent
 * network partition looks like to both peers. New connections are accepted but forwarded nothing.
 * {@link #heal} resumes forwarding on every connection, with the bytes that waited in the kernel
 * buffers, as a healed network delivers retransmitted segments.
 *
 * <p>Each connection costs two daemon threads and two 64 KiB buffers; this is test code for a
 * handful of connections.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean blackholed;
    private volatile boolean refusing;

    /**
     * Starts accepting on an ephemeral loopback port.
     *
     * @param targetPort the loopback port each accepted connection is forwarded to
     * @throws IOException if no listening socket can be opened
     */
    public TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return the port clients connect to */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Silently discards server→client bytes of every connection open now (the server's side keeps
     * being read, so it never blocks); later connections are unaffected. A half-dead connection
     * as the client sees it. Not undone by {@link #heal}.
     */
    public void stallServerToClient() {
        for (Link l : links) {
            l.discardServerToClient = true;
        }
    }

    /** Stops forwarding in both directions on every connection, open now or accepted later. */
    public void blackhole() {
        synchronized (gate) {
            blackholed = true;
        }
    }

    /**
     * A server host that is down: resets every open connection and closes each new one at once,
     * until {@link #heal}. The client sees errors right away rather than silence.
     */
    public void refuse() {
        refusing = true;
        for (Link l : links) {
            l.reset();
        }
        // Ends a black hole too: its connections are gone, and their pumps may now exit.
        synchronized (gate) {
            blackholed = false;
            gate.notifyAll();
        }
    }

    /** Resumes forwarding after {@link #blackhole} (on the same connections) or {@link #refuse}. */
    public void heal() {
        refusing = false;
        synchronized (gate) {
            blackholed = false;
            gate.notifyAll();
        }
    }

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (blackholed) {
                gate.wait();
            }
        }
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // the proxy was closed
            }
            if (refusing) {
                reset(client);
                continue;
            }
            try {
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                Link link = new Link(client, upstream);
                links.add(link);
                link.start();
            } catch (IOException e) {
                // The server is down: the client sees its connection closed, as it would with no proxy.
                closeQuietly(client);
            }
        }
    }

    /** Closes the listening socket and every connection. */
    @Override
    public void close() throws IOException {
        server.close();
        heal();
        for (Link l : links) {
            l.close();
        }
    }

    /** Closes with an RST rather than a FIN (SO_LINGER 0), as a host that lost the connection answers. */
    private static void reset(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (IOException e) {
            // Already closed: there is nothing left to reset.
        }
        closeQuietly(s);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // Closing a socket of a test proxy: nothing is left to release or report.
        }
    }

    private final class Link {
        final Socket client;
        final Socket upstream;
        volatile boolean discardServerToClient;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() {
            pump("c2s", client, upstream, false);
            pump("s2c", upstream, client, true);
        }

        private void pump(String name, Socket from, Socket to, boolean serverToClient) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[65536];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    while (true) {
                        awaitOpen(); // not reading while black-holed is what makes the sender block
                        int n = in.read(buf);
                        if (n < 0) {
                            return;
                        }
                        awaitOpen(); // bytes read just before the fault wait for the heal
                        if (serverToClient && discardServerToClient) {
                            continue;
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException e) {
                    // One side closed or reset: the other side gets the same, below.
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    close();
                }
            }, "tcp-proxy-" + name);
            t.setDaemon(true);
            t.start();
        }

        void reset() {
            TcpProxy.reset(client);
            TcpProxy.reset(upstream);
            links.remove(this);
        }

        void close() {
            closeQuietly(client);
            closeQuietly(upstream);
            links.remove(this);
        }
    }
}
