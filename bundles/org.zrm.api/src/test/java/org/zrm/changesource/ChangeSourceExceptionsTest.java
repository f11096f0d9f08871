package org.zrm.changesource;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The retry classification the streamer relies on. */
class ChangeSourceExceptionsTest {

    @Test
    void plainAndEndOfStreamFailuresAreRetryable() {
        assertTrue(new ChangeSourceException("connection reset").isRetryable());
        assertTrue(new ChangeStreamClosedException("closed").isRetryable());
    }

    @Test
    void abortsAndResetsAreNot() {
        assertFalse(new ChangeSourceAbortedException("replication slot zero_0 is missing").isRetryable());
        AutoResetException reset = new AutoResetException("replication slot zero_0 is missing");
        assertFalse(reset.isRetryable());
        // A reset is a kind of abort, mirroring upstream's AutoResetSignal extends AbortError.
        assertInstanceOf(ChangeSourceAbortedException.class, reset);
    }

    @Test
    void causesArePreserved() {
        IOException io = new IOException("boom");
        assertSame(io, new ChangeSourceException("x", io).getCause());
        assertSame(io, new AutoResetException("x", io).getCause());
        assertSame(io, new ChangeStreamClosedException("x", io).getCause());
    }
}
