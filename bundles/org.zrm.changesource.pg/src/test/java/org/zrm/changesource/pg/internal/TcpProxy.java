package org.zrm.changesource.pg.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on 127.0.0.1 that can silently stop forwarding server→client bytes of the
 * connections open at that moment: a half-dead connection as seen by the client.
 */
final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Stops forwarding server→client bytes on every connection open now; new ones are unaffected. */
    void stallServerToClient() {
        for (Link l : links) {
            l.stalled = true;
        }
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                Link link = new Link(client, upstream);
                links.add(link);
                link.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Link l : links) {
            l.close();
        }
    }

    private static final class Link {
        final Socket client;
        final Socket upstream;
        volatile boolean stalled;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() {
            thread("c2s", client, upstream, false);
            thread("s2c", upstream, client, true);
        }

        private void thread(String name, Socket from, Socket to, boolean stallable) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[65536];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        if (stallable && stalled) {
                            continue; // swallow: the client hears nothing more
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException e) {
                    // one side closed; close both
                } finally {
                    close();
                }
            }, "tcp-proxy-" + name);
            t.setDaemon(true);
            t.start();
        }

        void close() {
            try {
                client.close();
            } catch (IOException ignored) {
                // best effort in a test proxy
            }
            try {
                upstream.close();
            } catch (IOException ignored) {
                // best effort in a test proxy
            }
        }
    }
}
