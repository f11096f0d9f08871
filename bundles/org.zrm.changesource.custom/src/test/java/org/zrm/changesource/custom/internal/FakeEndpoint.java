package org.zrm.changesource.custom.internal;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
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

/** An in-test custom change-source endpoint on embedded Jetty at {@code /changes/v0/stream}. */
public final class FakeEndpoint implements AutoCloseable {

    final LinkedBlockingQueue<Conn> connections = new LinkedBlockingQueue<>();
    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);

    FakeEndpoint() throws Exception {
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        ContextHandler context = new ContextHandler("/");
        WebSocketUpgradeHandler ws = WebSocketUpgradeHandler.from(server, context, container -> {
            container.setMaxTextMessageSize(64 << 20);
            container.addMapping("/changes/v0/stream", (rq, rs, cb) -> {
                Map<String, List<String>> query = new LinkedHashMap<>();
                for (Fields.Field f : Request.extractQueryParameters(rq)) {
                    query.put(f.getName(), f.getValues());
                }
                return new Conn(rq.getHttpURI().getQuery(), query);
            });
        });
        context.setHandler(ws);
        server.setHandler(context);
        server.start();
    }

    /** {@code ws://127.0.0.1:<port>/changes/v0/stream?apiKey=secret}. */
    String url() {
        return "ws://127.0.0.1:" + connector.getLocalPort() + "/changes/v0/stream?apiKey=secret";
    }

    String displayName() {
        return "ws://127.0.0.1:" + connector.getLocalPort() + "/changes/v0/stream";
    }

    Conn awaitConnection() throws InterruptedException {
        Conn c = connections.poll(10, TimeUnit.SECONDS);
        if (c == null) {
            throw new AssertionError("no connection within 10 s");
        }
        return c;
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }

    public final class Conn implements Session.Listener.AutoDemanding {
        final String rawQuery;
        final Map<String, List<String>> query;
        final LinkedBlockingQueue<String> received = new LinkedBlockingQueue<>();
        final CountDownLatch closed = new CountDownLatch(1);
        volatile Session session;

        Conn(String rawQuery, Map<String, List<String>> query) {
            this.rawQuery = rawQuery;
            this.query = query;
        }

        @Override
        public void onWebSocketOpen(Session s) {
            session = s;
            connections.add(this);
        }

        @Override
        public void onWebSocketText(String text) {
            received.add(text);
        }

        @Override
        public void onWebSocketError(Throwable cause) {
            closed.countDown();
        }

        @Override
        public void onWebSocketClose(int status, String reason) {
            closed.countDown();
        }

        void send(List<String> messages) throws Exception {
            for (String m : messages) {
                send(m);
            }
        }

        synchronized void send(String text) throws Exception {
            Callback.Completable done = new Callback.Completable();
            session.sendText(text, done);
            done.get(5, TimeUnit.SECONDS);
        }

        String awaitReceived() throws InterruptedException {
            String s = received.poll(10, TimeUnit.SECONDS);
            if (s == null) {
                throw new AssertionError("nothing received within 10 s");
            }
            return s;
        }

        void awaitClosed() throws InterruptedException {
            if (!closed.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("client did not close the socket");
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
