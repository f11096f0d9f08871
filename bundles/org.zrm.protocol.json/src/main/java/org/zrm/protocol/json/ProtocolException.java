package org.zrm.protocol.json;

/**
 * A protocol message could not be decoded: malformed JSON, a wrong type, a missing member, a
 * wrong tuple length, an unknown tag or an unsupported version. The message has the form
 * {@code <path>: <reason>}, e.g. {@code $[1].relation.schema: expected string, got number}, where
 * the path uses {@code $} for the document root. No partially decoded object is ever returned.
 */
public final class ProtocolException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final String reason;

    /**
     * @param path JSON path of the offending member, e.g. {@code $[1].tag}
     * @param reason what is wrong with it
     */
    public ProtocolException(String path, String reason) {
        this(path, reason, null);
    }

    /**
     * @param path JSON path of the offending member
     * @param reason what is wrong with it
     * @param cause underlying parser error, may be {@code null}
     */
    public ProtocolException(String path, String reason, Throwable cause) {
        super(path + ": " + reason, cause);
        this.path = path;
        this.reason = reason;
    }

    /** The JSON path of the offending member ({@code $} for the whole document). */
    public String path() {
        return path;
    }

    /** The reason without the path. */
    public String reason() {
        return reason;
    }
}
