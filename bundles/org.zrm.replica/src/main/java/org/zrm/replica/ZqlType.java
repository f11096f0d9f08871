package org.zrm.replica;

/**
 * The value types ZQL (Zero's query language) supports for replicated columns (upstream
 * {@code ValueType} of {@code zero-protocol}). A column whose type has none is replicated but not
 * synced to clients.
 */
public enum ZqlType {
    /** Integers, floats, numerics, dates and times (times as epoch milliseconds). */
    NUMBER,
    /** Text types, enums, UUIDs, network addresses and other string-like types. */
    STRING,
    /** {@code bool}, stored in SQLite as 0/1. */
    BOOLEAN,
    /** {@code json}, {@code jsonb} and every array type, stored in SQLite as JSON text. */
    JSON
}
