package org.zrm.changesource.pg.internal.stream;

import java.util.Arrays;

/**
 * A growable list of {@code int}s: message costs kept beside their messages without boxing one
 * {@link Integer} per message on the hot path. Not thread-safe.
 */
final class IntArray {

    private int[] values = new int[64];
    private int size;

    void add(int v) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = v;
    }

    int get(int i) {
        return values[i];
    }

    int size() {
        return size;
    }

    void clear() {
        size = 0;
    }

    /** Drops the first {@code n} values. */
    void removeFirst(int n) {
        System.arraycopy(values, n, values, 0, size - n);
        size -= n;
    }
}
