package org.zrm.changesource.pg.internal.types;

/**
 * Decodes one field of a binary COPY tuple directly into a SQLite replica value (see
 * {@link org.zrm.replica.LiteValues} for the value types).
 */
@FunctionalInterface
public interface BinaryValueDecoder {
    /**
     * @param buf the field bytes
     * @param off offset of the field
     * @param len its length (never −1: NULL is handled by the caller)
     */
    Object decode(byte[] buf, int off, int len);
}
