package org.zrm.example.jsonl;

/**
 * Input in the change directory that the source cannot use: a malformed {@code schema.json} or a
 * change line that is not a valid transaction. The message names the file (and line) and the
 * problem, so an operator can fix the input; the source never skips such input, because skipping
 * a transaction would lose it silently.
 */
public final class BadInputException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message names the file, the line if any, and what is wrong */
    public BadInputException(String message) {
        super(message);
    }
}
