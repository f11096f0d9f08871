package org.zrm.changestreamer.http.internal;

/**
 * A request that failed validation. As upstream does, the upgrade completes and the socket is
 * then closed at once, so clients read the reason from the close frame.
 */
final class RejectedConnection extends WsConnection {

    private final int code;
    private final String reason;
    private final String path;

    /**
     * @param code the close code, normally 1002
     * @param reason the close reason, {@code "Error: <upstream message>"}
     * @param path the request path, for the log line
     */
    RejectedConnection(ConnectionResources resources, int code, String reason, String path) {
        super(resources, null);
        this.code = code;
        this.reason = reason;
        this.path = path;
    }

    @Override
    protected void opened() {
        resources.metrics().rejected();
        close(code, reason);
    }

    @Override
    protected void ended() {
        // nothing held
    }

    @Override
    protected String describe() {
        return "rejected[" + path + "]";
    }
}
