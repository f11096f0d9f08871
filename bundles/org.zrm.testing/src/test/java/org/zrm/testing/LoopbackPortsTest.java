package org.zrm.testing;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoopbackPortsTest {

    @Test
    void aRunIsBelowTheEphemeralRangeAndEveryPortOfItCanBeBound() throws Exception {
        for (int i = 0; i < 20; i++) {
            int first = LoopbackPorts.freeRun(3);
            assertTrue(first >= 20_000 && first + 2 < LoopbackPorts.ephemeralLow(), "run at " + first);
            List<ServerSocket> bound = new ArrayList<>();
            try {
                for (int p = first; p < first + 3; p++) {
                    ServerSocket s = new ServerSocket();
                    bound.add(s);
                    s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), p), 1);
                }
            } finally {
                for (ServerSocket s : bound) {
                    s.close();
                }
            }
        }
    }

    @Test
    void aCountBelowOneIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> LoopbackPorts.freeRun(0));
    }
}
