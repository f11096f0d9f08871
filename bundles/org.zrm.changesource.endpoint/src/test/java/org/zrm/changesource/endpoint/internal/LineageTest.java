package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.zrm.changelog.ChangeLogState;

class LineageTest {

    private static EndpointRequest resume(String last, String replicaVersion) {
        return new EndpointRequest("zero", 0, List.of(), last, replicaVersion);
    }

    @Test
    void currentOrLaterReplicaVersionIsServable() {
        ChangeLogState state = new ChangeLogState("05", "05");
        assertNull(Lineage.check(resume("05", "05"), state));
        assertNull(Lineage.check(resume("09", "05"), state));
        // a replica snapshotted later in the same lineage (this endpoint's own initial sync)
        assertNull(Lineage.check(resume("09", "07"), state));
    }

    @Test
    void earlierLineageRequiresAReset() {
        ChangeLogState state = new ChangeLogState("05", "05");
        assertTrue(Lineage.check(resume("09", "03"), state).startsWith("replicaVersion 03 predates"));
        assertTrue(Lineage.check(resume("04", "05"), new ChangeLogState("05", "05")) != null);
        assertTrue(Lineage.check(resume("06", "07"), state).contains("is before replicaVersion"));
    }
}
