package org.zrm.changestreamer.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogException;
import org.zrm.changelog.OwnershipLostException;
import org.zrm.changelog.ResetRequiredException;
import org.zrm.changesource.AutoResetException;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changestreamer.internal.StreamFailure.SourceRemovedException;
import org.zrm.changestreamer.internal.StreamFailure.UnrecoverableStreamException;

/** What each failure means for the supervisor, and why a stream ended. */
class StreamFailureTest {

    @Test
    void classification() {
        assertEquals(StreamFailure.RETRYABLE, StreamFailure.of(null));
        assertEquals(StreamFailure.RETRYABLE, StreamFailure.of(new ChangeSourceException("connection reset")));
        assertEquals(StreamFailure.RETRYABLE, StreamFailure.of(new ChangeLogException("db down")));
        assertEquals(StreamFailure.RETRYABLE, StreamFailure.of(new IllegalStateException("bug")));
        assertEquals(StreamFailure.SOURCE_REMOVED, StreamFailure.of(new SourceRemovedException()));
        assertEquals(StreamFailure.RESET_REQUIRED, StreamFailure.of(new ResetRequiredException("r")));
        assertEquals(StreamFailure.RESET_REQUIRED, StreamFailure.of(new AutoResetException("slot gone")));
        assertEquals(StreamFailure.FATAL, StreamFailure.of(new UnrecoverableStreamException("bad order")));
        assertEquals(StreamFailure.FATAL, StreamFailure.of(new OwnershipLostException("taken", "other")));
        ChangeLogException gone = new ChangeLogException("relation missing",
                new SQLException("relation \"changeLog\" does not exist", "42P01"));
        assertEquals(StreamFailure.CHANGE_LOG_GONE, StreamFailure.of(gone));
        assertTrue(StreamFailure.isFatal(gone));
        assertTrue(StreamFailure.isFatal(new ResetRequiredException("r")), "a reset request is never retried as is");
        assertFalse(StreamFailure.isFatal(new ChangeLogException("db down")));
    }

    @Test
    void whyAStreamEnded() {
        ChangeStreamClosedException closed = new ChangeStreamClosedException("closed");
        ChangeLogException storer = new ChangeLogException("storer failed");
        assertSame(storer, StreamFailure.endCause(closed, storer, true, false), "the storer closed the stream");
        assertSame(closed, StreamFailure.endCause(closed, null, true, false));
        assertInstanceOf(SourceRemovedException.class, StreamFailure.endCause(closed, null, true, true));
        assertNull(StreamFailure.endCause(closed, null, false, false), "closed because the streamer stops");
        assertSame(storer, StreamFailure.endCause(new ChangeLogException("enqueue refused"), storer, true, false));
        IllegalStateException inner = new IllegalStateException("broadcast failed");
        assertSame(inner, StreamFailure.endCause(new ExecutionException(inner), null, true, false));
        assertNull(StreamFailure.endCause(new InterruptedException(), null, false, false));
        assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
    }
}
