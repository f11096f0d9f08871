package org.zrm.changestreamer;

/**
 * Whose replica a subscriber maintains, from the {@code mode} query parameter.
 */
public enum ReplicatorMode {

    /**
     * A view-syncer's replica that serves users. A serving subscription also starts the streamer
     * early (instead of after the start-up delay), and a purged watermark yields a
     * {@code WatermarkTooOld} error frame.
     */
    SERVING("serving"),

    /**
     * The replication manager's own replica, which litestream backs up. A purged watermark makes
     * the replica unusable and triggers a reset instead of an error frame.
     */
    BACKUP("backup");

    private final String wireName;

    ReplicatorMode(String wireName) {
        this.wireName = wireName;
    }

    /** @return the query-parameter value, {@code "serving"} or {@code "backup"} */
    public String wireName() {
        return wireName;
    }

    /**
     * Parses the {@code mode} query parameter as upstream does: {@code "backup"} selects
     * {@link #BACKUP}; anything else, including {@code null} and the empty string, selects
     * {@link #SERVING}.
     *
     * @param value the parameter value, may be {@code null}
     * @return the mode, never {@code null}
     */
    public static ReplicatorMode fromQueryParameter(String value) {
        return "backup".equals(value) ? BACKUP : SERVING;
    }
}
