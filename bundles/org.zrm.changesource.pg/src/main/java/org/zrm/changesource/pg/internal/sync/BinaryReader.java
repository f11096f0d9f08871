package org.zrm.changesource.pg.internal.sync;

/** Big-endian integer reads. */
final class BinaryReader {
    private BinaryReader() {}

    static int int16(byte[] b, int o) {
        return (short) ((b[o] & 0xff) << 8 | (b[o + 1] & 0xff));
    }

    static int int32(byte[] b, int o) {
        return (b[o] & 0xff) << 24 | (b[o + 1] & 0xff) << 16 | (b[o + 2] & 0xff) << 8 | (b[o + 3] & 0xff);
    }
}
