package org.zrm.launcher;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;

/**
 * Checks, before the runtime starts, that the change-streamer port can be bound. The runtime's HTTP
 * service logs a bind failure and goes on without a listener, so a port held by another process
 * (a second ZRM, a zero-cache on the same machine) would otherwise give a node that runs, replicates
 * and cannot be reached. A port taken between this check and the runtime's bind is not caught here;
 * it is a rare race, and the runtime's log names it.
 */
final class PortCheck {

    private PortCheck() {
    }

    /**
     * @param bind the bind address ({@code ZRM_BIND_ADDRESS}); blank means every interface
     * @param port the change-streamer port
     * @throws LaunchException naming the port and how to choose another, if it cannot be bound now
     */
    static void requireFree(String bind, int port) {
        InetSocketAddress address;
        try {
            address = bind == null || bind.isBlank() ? new InetSocketAddress(port)
                    : new InetSocketAddress(InetAddress.getByName(bind.strip()), port);
        } catch (UnknownHostException e) {
            throw new LaunchException(EnvRegistry.BIND_ADDRESS + "=" + bind.strip() + " is not an address of this machine: "
                    + e.getMessage(), e);
        }
        try (ServerSocket s = new ServerSocket()) {
            s.bind(address, 1);
        } catch (IOException e) {
            throw new LaunchException("the change-streamer port " + port + " on "
                    + (bind == null || bind.isBlank() ? "every interface" : bind.strip()) + " cannot be bound ("
                    + e.getMessage() + "): another process listens there (a second ZRM or a zero-cache?); stop it, or set "
                    + EnvRegistry.CHANGE_STREAMER_PORT + " (default ZERO_PORT + 1) to a free port", e);
        }
    }
}
