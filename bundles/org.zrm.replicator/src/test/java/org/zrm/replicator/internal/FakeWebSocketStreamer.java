package org.zrm.replicator.internal;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;
import org.zrm.changestreamer.SubscriberContext;
import org.zrm.protocol.subscriber.Ack;
import org.zrm.protocol.subscriber.Frame;

/**
 * A fake protocol-v6 change streamer on embedded Jetty (127.0.0.1, ephemeral port): parses the
 * {@code /changes} request with the real parser, lets the test send frames and checks that acks
 * arrive in order.
 */
public final class FakeWebSocketStreamer implements AutoCloseable {

    final LinkedBlockingQueue<Conn> connections = new LinkedBlockingQueue<>();
    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);

    FakeWebSocketStreamer() throws Exception {
        this(0);
    }

    FakeWebSocketStreamer(int port) throws Exception {
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
        ContextHandler context = new ContextHandler("/");
        WebSocketUpgradeHandler ws = WebSocketUpgradeHandler.from(server, context, container ->
                container.addMapping("/replication/v6/changes", (rq, rs, cb) -> {
                    Map<String, List<String>> query = new LinkedHashMap<>();
                    Fields fields = Request.extractQueryParameters(rq);
                    for (Fields.Field f : fields) {
                        query.put(f.getName(), f.getValues());
                    }
                    return new Conn(SubscriberContext.parse(rq.getHttpURI().getPath(), query));
                }));
        context.setHandler(ws);
        server.setHandler(context);
        server.start();
    }

    URI uri() {
        return URI.create("ws://127.0.0.1:" + connector.getLocalPort() + "/");
    }

    int port() {
        return connector.getLocalPort();
    }

    Conn awaitConnection() throws InterruptedException {
        Conn c = connections.poll(10, TimeUnit.SECONDS);
        if (c == null) {
            throw new AssertionError("no connection within 10 s");
        }
        return c.awaitOpen();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    public final class Conn implements Session.Listener.AutoDemanding {
        final SubscriberContext context;
        final List<Long> acks = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        private final java.util.concurrent.CountDownLatch opened = new java.util.concurrent.CountDownLatch(1);
        volatile Session session;
        volatile boolean closed;
        private long nextId = 1;

        Conn(SubscriberContext context) {
            this.context = context;
        }

        Conn awaitOpen() throws InterruptedException {
            if (!opened.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("socket not opened");
            }
            return this;
        }

        @Override
        public void onWebSocketOpen(Session s) {
            session = s;
            connections.add(this);
            opened.countDown();
        }

        @Override
        public void onWebSocketText(String text) {
            try {
                long id = Msgs.CODEC.decodeAck(text).id();
                long expected = acks.size() + 1;
                if (id != expected) {
                    violations.add("Unexpected ack for " + expected + ": " + id);
                }
                synchronized (acks) {
                    acks.add(id);
                    acks.notifyAll();
                }
            } catch (RuntimeException e) {
                violations.add("bad ack frame " + text + ": " + e);
            }
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            closed = true; // the client went away without a close handshake (tests drop or abort on purpose)
        }

        @Override
        public void onWebSocketClose(int status, String reason) {
            closed = true;
        }

        /** Sends messages as frames with consecutive ids. */
        synchronized void send(String... messages) throws Exception {
            for (String m : messages) {
                sendRaw(new Frame(nextId++, m).toJson());
            }
        }

        synchronized void sendRaw(String text) throws Exception {
            Callback.Completable done = new Callback.Completable();
            session.sendText(text, done);
            done.get(5, TimeUnit.SECONDS);
        }

        void awaitAcks(int n) throws InterruptedException {
            synchronized (acks) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (acks.size() < n) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new AssertionError("only " + acks.size() + " of " + n + " acks");
                    }
                    acks.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
                }
            }
        }

        /** Drops the TCP connection without a close handshake. */
        void drop() {
            session.disconnect();
        }

        void close(int status, String reason) {
            session.close(status, reason, Callback.NOOP);
        }
    }
}
