package org.zrm.changesource.pg.internal.types;

/** OIDs of the built-in Postgres types the value converters know (stable across versions). */
public final class PgTypeOids {
    public static final int BOOL = 16;
    public static final int BYTEA = 17;
    public static final int CHAR = 18;
    public static final int NAME = 19;
    public static final int INT8 = 20;
    public static final int INT2 = 21;
    public static final int INT4 = 23;
    public static final int TEXT = 25;
    public static final int OID = 26;
    public static final int JSON = 114;
    public static final int FLOAT4 = 700;
    public static final int FLOAT8 = 701;
    public static final int BOX = 603;
    public static final int BPCHAR = 1042;
    public static final int VARCHAR = 1043;
    public static final int DATE = 1082;
    public static final int TIME = 1083;
    public static final int TIMESTAMP = 1114;
    public static final int TIMESTAMPTZ = 1184;
    public static final int TIMETZ = 1266;
    public static final int NUMERIC = 1700;
    public static final int UUID = 2950;
    public static final int JSONB = 3802;

    /** The array type of {@code box} is the only built-in array whose element delimiter is {@code ;}. */
    public static final int BOX_ARRAY = 1020;

    private PgTypeOids() {}
}
