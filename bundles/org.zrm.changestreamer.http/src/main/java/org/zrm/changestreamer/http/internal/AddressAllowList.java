package org.zrm.changestreamer.http.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Who may open a replication connection ({@code ZRM_CHANGE_STREAMER_ALLOW}): a comma-separated
 * list of CIDRs or single addresses, IPv4 or IPv6. Empty allows everyone, as zero-cache does. A
 * refused address is meant to be logged once per address per minute ({@link #shouldLog}), so a
 * scanner cannot flood the log.
 */
final class AddressAllowList {

    /** How many refused addresses are remembered for log throttling; beyond it the memory is reset. */
    static final int MAX_REMEMBERED = 4096;
    static final long LOG_INTERVAL_MS = 60_000;

    private record Block(byte[] network, int prefix) {
        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int full = prefix / 8;
            for (int i = 0; i < full; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefix % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (address[full] & mask) == (network[full] & mask);
        }
    }

    private final List<Block> blocks;
    private final String text;
    private final LongSupplier clock;
    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

    private AddressAllowList(List<Block> blocks, String text, LongSupplier clock) {
        this.blocks = blocks;
        this.text = text;
        this.clock = clock;
    }

    /**
     * @param text e.g. {@code 10.0.0.0/8, 192.168.1.7, fd00::/8}; blank for everyone
     * @throws IllegalArgumentException naming the property and the entry that is not a CIDR
     */
    static AddressAllowList parse(String text) {
        return parse(text, System::currentTimeMillis);
    }

    static AddressAllowList parse(String text, LongSupplier clock) {
        List<Block> blocks = new ArrayList<>();
        String all = text == null ? "" : text.strip();
        for (String entry : all.isEmpty() ? new String[0] : all.split(",", -1)) {
            String e = entry.strip();
            int slash = e.indexOf('/');
            String host = slash < 0 ? e : e.substring(0, slash);
            byte[] network = literal(host, e);
            int prefix = network.length * 8;
            if (slash >= 0) {
                try {
                    prefix = Integer.parseInt(e.substring(slash + 1));
                } catch (NumberFormatException ex) {
                    throw new IllegalArgumentException("allow (ZRM_CHANGE_STREAMER_ALLOW): bad prefix length in '" + e + "'");
                }
                if (prefix < 0 || prefix > network.length * 8) {
                    throw new IllegalArgumentException("allow (ZRM_CHANGE_STREAMER_ALLOW): prefix length out of range in '"
                            + e + "'");
                }
            }
            blocks.add(new Block(network, prefix));
        }
        return new AddressAllowList(List.copyOf(blocks), all, clock);
    }

    /** Only IP literals: a host name would make every request wait on DNS. */
    private static byte[] literal(String host, String entry) {
        if (host.isEmpty() || !(host.contains(":") || host.chars().allMatch(c -> c == '.' || Character.isDigit(c)))) {
            throw new IllegalArgumentException("allow (ZRM_CHANGE_STREAMER_ALLOW): '" + entry
                    + "' is not an IP address or CIDR");
        }
        try {
            return InetAddress.getByName(host).getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("allow (ZRM_CHANGE_STREAMER_ALLOW): '" + entry
                    + "' is not an IP address or CIDR", e);
        }
    }

    boolean allowsEveryone() {
        return blocks.isEmpty();
    }

    /** @param remote the peer's address as the servlet container reports it (an IP literal) */
    boolean permits(String remote) {
        if (blocks.isEmpty()) {
            return true;
        }
        byte[] address;
        try {
            String host = remote.startsWith("[") && remote.endsWith("]") ? remote.substring(1, remote.length() - 1) : remote;
            address = InetAddress.getByName(host).getAddress();
        } catch (UnknownHostException | RuntimeException e) {
            return false;
        }
        byte[] v4 = mappedV4(address);
        for (Block b : blocks) {
            if (b.contains(address) || (v4 != null && b.contains(v4))) {
                return true;
            }
        }
        return false;
    }

    /** An IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}) as IPv4, else {@code null}. */
    private static byte[] mappedV4(byte[] a) {
        if (a.length != 16) {
            return null;
        }
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return null;
            }
        }
        if (a[10] != (byte) 0xff || a[11] != (byte) 0xff) {
            return null;
        }
        return new byte[] {a[12], a[13], a[14], a[15]};
    }

    /** Whether a refusal of {@code remote} should be logged now: once per address per minute. */
    boolean shouldLog(String remote) {
        long now = clock.getAsLong();
        if (lastLogged.size() >= MAX_REMEMBERED) {
            lastLogged.clear();
        }
        Long before = lastLogged.get(remote);
        if (before != null && now - before < LOG_INTERVAL_MS) {
            return false;
        }
        lastLogged.put(remote, now);
        return true;
    }

    @Override
    public String toString() {
        return blocks.isEmpty() ? "everyone" : text;
    }
}
