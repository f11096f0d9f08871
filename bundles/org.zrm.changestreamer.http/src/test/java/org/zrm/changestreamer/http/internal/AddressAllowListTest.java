package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The replication endpoints' address allow-list: parsing, matching, log throttling, and a refused peer. */
class AddressAllowListTest {

    @Test
    void emptyAllowsEveryone() {
        AddressAllowList all = AddressAllowList.parse(" ");
        assertTrue(all.allowsEveryone());
        assertTrue(all.permits("203.0.113.9"));
        assertEquals("everyone", all.toString());
    }

    @Test
    void cidrsAndSingleAddressesOfBothFamiliesMatch() {
        AddressAllowList list = AddressAllowList.parse("10.0.0.0/8, 192.168.1.7,127.0.0.1/32, fd00::/8, 172.16.0.0/12");
        assertTrue(list.permits("10.255.1.2"));
        assertTrue(list.permits("192.168.1.7"));
        assertFalse(list.permits("192.168.1.8"));
        assertTrue(list.permits("127.0.0.1"));
        assertFalse(list.permits("127.0.0.2"));
        assertTrue(list.permits("172.31.255.255"));
        assertFalse(list.permits("172.32.0.0"));
        assertTrue(list.permits("fd12:3456::1"));
        assertTrue(list.permits("[fd12:3456::1]"));
        assertFalse(list.permits("fe80::1"));
        assertTrue(list.permits("::ffff:10.1.2.3"), "an IPv4-mapped peer matches its IPv4 block");
        assertFalse(list.permits("not an address"));
    }

    @Test
    void badEntriesAreClearErrorsNamingTheSetting() {
        for (String bad : new String[] {"10.0.0.0/33", "10.0.0.0/x", "example.com", "10.0.0.0/8,,", "::1/129"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AddressAllowList.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("allow (ZRM_CHANGE_STREAMER_ALLOW): "), e.getMessage());
        }
    }

    @Test
    void refusalsAreLoggedOncePerAddressPerMinute() {
        AtomicLong now = new AtomicLong(1_000_000);
        AddressAllowList list = AddressAllowList.parse("10.0.0.0/8", now::get);
        assertTrue(list.shouldLog("1.2.3.4"));
        assertFalse(list.shouldLog("1.2.3.4"));
        assertTrue(list.shouldLog("1.2.3.5"));
        now.addAndGet(AddressAllowList.LOG_INTERVAL_MS);
        assertTrue(list.shouldLog("1.2.3.4"));
    }

    @Test
    void aPeerOutsideTheListIsRefusedBeforeTheUpgradeAndAnAllowedOneIsNot() throws Exception {
        try (TestServer server = new TestServer(Settings.DEFAULTS, AddressAllowList.parse("127.0.0.1"))) {
            assertTrue(upgradeStatusLine(server, "127.0.0.2").contains(" 403 "), "127.0.0.2 is not allowed");
            assertTrue(server.streamer.subscriptions.isEmpty(), "no subscription was made for the refused peer");
            assertTrue(upgradeStatusLine(server, "127.0.0.1").contains(" 101 "), "127.0.0.1 is allowed");
        }
    }

    /** Sends a WebSocket upgrade from {@code localAddress} and returns the response's status line. */
    private static String upgradeStatusLine(TestServer server, String localAddress) throws Exception {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName(localAddress), 0));
            s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
            s.setSoTimeout(5_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /replication/v6/changes?id=x&taskID=t&mode=serving&replicaVersion=01&watermark=01"
                    + "&initial=false HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                line.append((char) c);
            }
            return line.toString();
        }
    }
}
