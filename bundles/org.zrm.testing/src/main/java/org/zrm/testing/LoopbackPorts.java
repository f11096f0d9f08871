package org.zrm.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for a server a test starts in another process, which binds them itself
 * later.
 *
 * <p>{@code new ServerSocket(0)} hands out a port of the kernel's ephemeral range, which is also
 * where every outgoing connection (a JDBC connection, a proxy's upstream socket) gets its local
 * port. A port found free that way, or its neighbour {@code +1} that ZRM derives for the change
 * streamer, can be taken by any outgoing connection of the test before the runtime binds it; the
 * runtime then starts without its HTTP port. This class picks ports below the ephemeral range,
 * which the kernel never assigns on its own, and checks that each one can be bound now. What is
 * left is another test picking the same random port in the same moment.
 */
public final class LoopbackPorts {

    /** The lowest port picked: above the registered services most machines run. */
    private static final int LOWEST = 20_000;
    /** Linux's default ephemeral range starts here; used when the kernel's setting is unreadable. */
    private static final int DEFAULT_EPHEMERAL_LOW = 32_768;
    private static final int ATTEMPTS = 200;

    private LoopbackPorts() {
    }

    /**
     * @param count how many consecutive ports are needed (e.g. 3 for {@code ZERO_PORT} and the two
     *     ports ZRM derives from it)
     * @return the first of {@code count} consecutive ports that are free on the loopback address
     *     and outside the ephemeral range
     * @throws IOException if none were found after a bounded number of random tries
     */
    public static int freeRun(int count) throws IOException {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, got " + count);
        }
        int ephemeralLow = ephemeralLow();
        int high = ephemeralLow - count;
        if (high <= LOWEST) {
            throw new IOException("no ports below the ephemeral range (starting at " + ephemeralLow + ") to pick from");
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int first = ThreadLocalRandom.current().nextInt(LOWEST, high);
            if (allFree(first, count)) {
                return first;
            }
        }
        throw new IOException("no " + count + " consecutive free loopback ports found in " + ATTEMPTS + " tries between "
                + LOWEST + " and " + high);
    }

    private static boolean allFree(int first, int count) {
        for (int p = first; p < first + count; p++) {
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(false);
                s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), p), 1);
            } catch (IOException taken) {
                return false; // in use: the caller tries another run
            }
        }
        return true;
    }

    /** The low end of Linux's {@code ip_local_port_range}, else its default. */
    static int ephemeralLow() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        try {
            // readAllLines, not readString: JDK 17 reads a procfs file of reported size 0 as one byte.
            String[] parts = String.join(" ", Files.readAllLines(range)).strip().split("\\s+");
            return Integer.parseInt(parts[0]);
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW; // not Linux, or not readable: the common default
        }
    }
}
