package org.zrm.changesource.pg.internal.setup;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The configured shard: app id, shard number and the user publications ({@code app.publications};
 * empty means the default publication {@code _{app}_public_{n}} over schema {@code public}).
 */
public record ShardConfig(ShardId id, List<String> publications) {

    private static final Pattern PUBLICATION = Pattern.compile("^[a-zA-Z_][a-zA-Z0-9_]*$");

    public ShardConfig {
        Objects.requireNonNull(id, "id");
        publications = List.copyOf(publications);
    }

    public static ShardConfig of(String appId, int shardNum, List<String> publications) {
        return new ShardConfig(new ShardId(appId, shardNum), publications);
    }

    /**
     * Checks the configured publication names (spec §4.2 step 1).
     *
     * @throws IllegalArgumentException with upstream's message
     */
    public void validatePublicationNames() {
        for (String pub : publications) {
            if (!PUBLICATION.matcher(pub).matches()) {
                throw new IllegalArgumentException("Invalid publication name \"" + pub
                        + "\". Publication names must start with a letter or underscore "
                        + "and contain only letters, digits, and underscores.");
            }
            if (pub.length() > 63) {
                throw new IllegalArgumentException(
                        "Publication name \"" + pub + "\" exceeds PostgreSQL's 63-character identifier limit.");
            }
            if (pub.startsWith("_")) {
                throw new IllegalArgumentException("Publication names starting with \"_\" are reserved for internal use.\n"
                        + "Please use a different name for publication \"" + pub + "\".");
            }
        }
    }
}
