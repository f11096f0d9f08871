package org.zrm.changesource.pg.internal.replication;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What to stream and how to keep the stream alive.
 *
 * @param slot the logical replication slot
 * @param publications publication names passed to pgoutput
 * @param keepaliveFraction a manual status update is sent when nothing was sent for this fraction
 *     of {@code wal_sender_timeout} (upstream: 0.75)
 * @param inboundTimeout a positive value replaces the default inbound-silence limit of
 *     2 × {@code wal_sender_timeout}; zero keeps the default; negative disables the check
 * @param slotActiveRetries how often START_REPLICATION is retried while the slot is still active
 *     for another (terminating) walsender (upstream: 5)
 * @param slotActiveRetryDelay the first delay between those attempts, doubled each time
 * @param maxMessageBytes the largest replication message accepted; a larger one fails the stream
 *     with a clear error instead of being buffered
 */
public record StreamSettings(String slot, List<String> publications, double keepaliveFraction, Duration inboundTimeout,
        int slotActiveRetries, Duration slotActiveRetryDelay, int maxMessageBytes) {

    private static final Pattern PUBLICATION = Pattern.compile("^[a-zA-Z_][a-zA-Z0-9_]*$");

    public StreamSettings {
        Objects.requireNonNull(slot, "slot");
        publications = List.copyOf(publications);
        if (publications.isEmpty()) {
            throw new IllegalArgumentException("at least one publication is required");
        }
        for (String p : publications) {
            if (!PUBLICATION.matcher(p).matches() || p.length() > 63) {
                throw new IllegalArgumentException("invalid publication name '" + p + "'");
            }
        }
        if (!(keepaliveFraction > 0 && keepaliveFraction < 1)) {
            throw new IllegalArgumentException("keepaliveFraction must be in (0,1): " + keepaliveFraction);
        }
        Objects.requireNonNull(inboundTimeout, "inboundTimeout");
        if (slotActiveRetries < 0) {
            throw new IllegalArgumentException("slotActiveRetries must be >= 0");
        }
        Objects.requireNonNull(slotActiveRetryDelay, "slotActiveRetryDelay");
        if (maxMessageBytes < 1024) {
            throw new IllegalArgumentException("maxMessageBytes must be >= 1024: " + maxMessageBytes);
        }
    }

    /** Upstream's defaults for {@code slot} and {@code publications}. */
    public static StreamSettings defaults(String slot, List<String> publications) {
        return new StreamSettings(slot, publications, 0.75, Duration.ZERO, 5, Duration.ofMillis(10), 256 << 20);
    }

    public StreamSettings withInboundTimeout(Duration timeout) {
        return new StreamSettings(slot, publications, keepaliveFraction, timeout, slotActiveRetries,
                slotActiveRetryDelay, maxMessageBytes);
    }

    public StreamSettings withMaxMessageBytes(int max) {
        return new StreamSettings(slot, publications, keepaliveFraction, inboundTimeout, slotActiveRetries,
                slotActiveRetryDelay, max);
    }

    /**
     * The START_REPLICATION command. Publication names are double-quoted (they are validated
     * identifiers), which fixes upstream's QUIRK of Postgres down-casing unquoted mixed-case names.
     */
    String startCommand(long lsn) {
        StringBuilder pubs = new StringBuilder();
        for (String p : publications) {
            if (pubs.length() > 0) {
                pubs.append(',');
            }
            pubs.append('"').append(p).append('"');
        }
        return "START_REPLICATION SLOT \"" + slot.replace("\"", "\"\"") + "\" LOGICAL "
                + org.zrm.watermark.Lsn.of(lsn) + " (proto_version '1', publication_names '" + pubs
                + "', messages 'true')";
    }
}
