package org.zrm.changesource.endpoint.internal;

/** The socket side of a {@link StreamForwarder}: Jetty in production, a list in unit tests. */
interface Outbound {

    /**
     * Hands one text frame to the socket without waiting for it to be written.
     *
     * @param text the frame
     * @param written run once the frame has been written, or the connection failed
     */
    void send(String text, Runnable written);

    /** Closes the connection with a close frame after the frames already handed over. */
    void close(int code, String reason);
}
