package org.zrm.replica;

/**
 * A column default that SQLite cannot reproduce (upstream {@code UnsupportedColumnDefaultError});
 * the column's values must be backfilled from upstream instead. Thrown by
 * {@link LiteDefaults#mapPostgresToLiteDefault}.
 */
public final class UnsupportedColumnDefaultException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message names the table, column and default
     */
    public UnsupportedColumnDefaultException(String message) {
        super(message);
    }
}
