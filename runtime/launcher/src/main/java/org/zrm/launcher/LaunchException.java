package org.zrm.launcher;

/** The launch cannot go on; the message is the one line the user sees. */
public class LaunchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong and what to do */
    public LaunchException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong and what to do
     * @param cause the underlying failure
     */
    public LaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
