package org.zrm.changesource.pg.internal.types;

/** The value types ZQL (Zero's query language) supports for replicated columns. */
public enum ZqlType {
    NUMBER,
    STRING,
    BOOLEAN,
    JSON
}
