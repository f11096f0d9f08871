package org.zrm.changelog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.SubscriptionState;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.subscriber.ErrorType;

/** Value types and exception texts of the change-log API. */
class ChangeLogTypesTest {

    @Test
    void watermarkTooOldUsesUpstreamText() {
        WatermarkTooOldException e = new WatermarkTooOldException("4e672g", "4e5zzz");
        assertEquals("earliest supported watermark is 4e672g (requested 4e5zzz)", e.getMessage());
        assertEquals("4e672g", e.earliest());
        assertEquals("4e5zzz", e.requested());
        assertEquals(ErrorType.WATERMARK_TOO_OLD, e.errorType());
        assertEquals(2, e.errorType().code());
    }

    @Test
    void wrongReplicaVersionUsesUpstreamText() {
        WrongReplicaVersionException e = new WrongReplicaVersionException("4e5k00", "4e0000");
        assertEquals("current replica version is 4e5k00 (requested 4e0000)", e.getMessage());
        assertEquals(ErrorType.WRONG_REPLICA_VERSION, e.errorType());
        assertEquals(1, e.errorType().code());
    }

    @Test
    void exceptionHierarchy() {
        assertInstanceOf(ChangeLogException.class, new OwnershipLostException("aborting", "task-2"));
        assertInstanceOf(ChangeLogException.class, new ResetRequiredException("reset required by replication stream"));
        assertEquals("task-2", new OwnershipLostException("aborting", "task-2").newOwner());
        assertNull(new OwnershipLostException("aborting", null).newOwner());
    }

    @Test
    void entryValidation() {
        ChangeLogEntry commit = new ChangeLogEntry("4e672g", 3, "commit", "{\"tag\":\"commit\"}", "4e672g");
        assertEquals("4e672g", commit.precommit());
        assertNull(new ChangeLogEntry("4e672g", 0, "begin", "{\"tag\":\"begin\"}", null).precommit());
        assertThrows(IllegalArgumentException.class, () -> new ChangeLogEntry("01", -1, "begin", "{}", null));
        assertThrows(NullPointerException.class, () -> new ChangeLogEntry("01", 0, "begin", null, null));
    }

    @Test
    void recordsCopyTheirLists() {
        List<String> pubs = new ArrayList<>(List.of("zero_data"));
        SubscriptionState state = new SubscriptionState("4e5k00", pubs, "4e5k00");
        pubs.add("late");
        assertEquals(List.of("zero_data"), state.publications());
        assertThrows(UnsupportedOperationException.class, () -> state.publications().add("x"));

        List<BackfillRequest> requests = new ArrayList<>();
        StreamStartParameters params = new StreamStartParameters("4e672g", requests);
        requests.add(new BackfillRequest(new BackfillRequest.Table("public", "foo", null), java.util.Map.of()));
        assertEquals(List.of(), params.backfillRequests());
        assertThrows(NullPointerException.class, () -> new ChangeLogState("01", null));
        assertFalse(new ReplicationState("01", null, null).lastWatermark().isEmpty());
    }
}
