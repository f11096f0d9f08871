package org.zrm.protocol;

/** The payload of a {@code ["data", …]} tuple: a data change or a schema change. */
public sealed interface DataOrSchemaChange extends Change permits DataChange, SchemaChange {}
