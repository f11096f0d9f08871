package org.zrm.storer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogEntry;

class CopyBuffersTest {

    @Test
    void releasedArraysAreReusedWhenLargeEnough() {
        CopyBuffers buffers = new CopyBuffers();
        byte[] a = buffers.acquire(1000);
        buffers.release(a);
        assertSame(a, buffers.acquire(500), "a free array that is large enough is reused");
        buffers.release(a);
        byte[] bigger = buffers.acquire(5000);
        assertNotSame(a, bigger, "a too-small free array is not used");
        assertTrue(bigger.length >= 5000);
    }

    @Test
    void atMostTwoArraysOfBoundedSizeAreKept() {
        CopyBuffers buffers = new CopyBuffers();
        buffers.release(new byte[10]);
        buffers.release(new byte[10]);
        buffers.release(new byte[10]);
        assertEquals(CopyBuffers.RETAINED, buffers.retained(), "a third release is dropped");
        CopyBuffers other = new CopyBuffers();
        other.release(new byte[CopyBuffers.MAX_RETAINED_BYTES + 1]);
        assertEquals(0, other.retained(), "an oversized array is left to the collector");
    }

    @Test
    void encodingIntoARecycledArrayGivesTheSameBytes() {
        List<ChangeLogEntry> rows = List.of(
                new ChangeLogEntry("0a", 0, "begin", "{\"tag\":\"begin\"}", null),
                new ChangeLogEntry("0a", 1, "commit", "{\"tag\":\"commit\"}", "0a"));
        BatchCopy fresh = BatchCopy.encode(rows);
        CopyBuffers buffers = new CopyBuffers();
        byte[] dirty = new byte[4096];
        java.util.Arrays.fill(dirty, (byte) 7);
        buffers.release(dirty);
        BatchCopy recycled = BatchCopy.encode(rows, buffers);
        assertSame(dirty, recycled.buffer());
        assertEquals(fresh.length(), recycled.length());
        assertEquals(java.util.Arrays.toString(java.util.Arrays.copyOf(fresh.buffer(), fresh.length())),
                java.util.Arrays.toString(java.util.Arrays.copyOf(recycled.buffer(), recycled.length())));
    }
}
