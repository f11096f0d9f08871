package org.zrm.changesource.custom.internal;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A WebSocket server that completes the handshake and then never answers, not even pings: the
 * client's liveness check must terminate the socket.
 */
final class SilentEndpoint implements AutoCloseable {

    private final ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
    private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    SilentEndpoint() throws Exception {
        acceptor = new Thread(this::accept, "silent-endpoint");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String url() {
        return "ws://127.0.0.1:" + server.getLocalPort() + "/changes/v0/stream";
    }

    private void accept() {
        try {
            while (true) {
                Socket s = server.accept();
                sockets.add(s);
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
                String key = null;
                for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                    if (line.toLowerCase().startsWith("sec-websocket-key:")) {
                        key = line.substring(line.indexOf(':') + 1).trim();
                    }
                }
                String accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1")
                        .digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.ISO_8859_1)));
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                // ... and then silence: nothing is read or written on this socket again.
            }
        } catch (Exception e) {
            // the server socket was closed by close(): the test is over
        }
    }

    @Override
    public void close() throws Exception {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
