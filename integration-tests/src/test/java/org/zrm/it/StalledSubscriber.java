package org.zrm.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A subscriber that upgrades to a v6 {@code /changes} subscription and then never reads again: a
 * raw socket with a small receive buffer, so that the server's writes back up after a few
 * kilobytes and everything further stays in the runtime's buffers until its byte bound.
 */
final class StalledSubscriber implements AutoCloseable {

    private final Socket socket;

    private StalledSubscriber(Socket socket) {
        this.socket = socket;
    }

    /** Connects, upgrades and returns once the server has answered 101; reads nothing after that. */
    static StalledSubscriber connect(URI uri) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096); // before connect, so that the TCP window is small from the start
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), uri.getPort()), 10_000);
        s.setSoTimeout(10_000);
        byte[] nonce = new byte[16];
        ThreadLocalRandom.current().nextBytes(nonce);
        String request = "GET " + uri.getRawPath() + "?" + uri.getRawQuery() + " HTTP/1.1\r\n"
                + "Host: 127.0.0.1:" + uri.getPort() + "\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: " + Base64.getEncoder().encodeToString(nonce) + "\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n";
        OutputStream out = s.getOutputStream();
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String head = readHead(s.getInputStream());
        if (!head.startsWith("HTTP/1.1 101")) {
            s.close();
            throw new IOException("upgrade refused: " + head.lines().findFirst().orElse(head));
        }
        return new StalledSubscriber(s);
    }

    /** The response head, read a byte at a time so that no frame after it is consumed. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < end.length) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("connection closed during the upgrade: " + b.toString(StandardCharsets.US_ASCII));
            }
            b.write(c);
            matched = c == end[matched] ? matched + 1 : (c == '\r' ? 1 : 0);
            if (b.size() > 16_384) {
                throw new IOException("upgrade response head over 16 KiB");
            }
        }
        return b.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
