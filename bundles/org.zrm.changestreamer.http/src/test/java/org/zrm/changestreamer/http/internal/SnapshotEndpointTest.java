package org.zrm.changestreamer.http.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zrm.backup.SnapshotReservation;
import org.zrm.changestreamer.SnapshotUnavailableException;
import org.zrm.protocol.subscriber.SnapshotStatus;

/** The {@code /replication/v{N}/snapshot} reservation endpoint (spec §2.7). */
class SnapshotEndpointTest {

    private static final String STATUS_FRAME = "{\"id\":1,\"msg\":[\"status\",{\"tag\":\"status\","
            + "\"backupURL\":\"s3://foo/bar\",\"replicaVersion\":\"148\",\"minWatermark\":\"188\"}]}";

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(Settings.DEFAULTS);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void statusIsStreamedOnceAndTheConnectionHeldOpen() throws Exception {
        try (TestClient client = new TestClient(server.ws("/replication/v6/snapshot?taskID=foo-bar-id"))) {
            SnapshotReservation reservation = server.streamer.nextReservation();
            assertEquals("foo-bar-id", reservation.taskID());
            assertFalse(reservation.isClosed());
            assertEquals(1, server.metrics.openConnections(HttpMetrics.Endpoint.SNAPSHOT));

            assertTrue(reservation.sendStatus(new SnapshotStatus("s3://foo/bar", "148", "188")));
            assertFalse(reservation.sendStatus(new SnapshotStatus("s3://other", "148", "188")));
            assertEquals(STATUS_FRAME, client.next());
            client.ack(1);

            // Held open until the reservation ends: the subscription with initial=true ends it.
            assertFalse(client.closed.isDone());
            reservation.close();
            assertEquals(1000, client.awaitClose().code());
            assertTrue(reservation.isClosed());
            assertTrue(server.streamer.endedReservations.isEmpty());
        }
    }

    @Test
    void everyProtocolVersionIsServed() throws Exception {
        try (TestClient client = new TestClient(server.ws("/replication/v3/snapshot?taskID=t"))) {
            assertEquals("t", server.streamer.nextReservation().taskID());
        }
    }

    @Test
    void clientCloseEndsTheReservationWithoutEndReservation() throws Exception {
        try (TestClient client = new TestClient(server.ws("/replication/v6/snapshot?taskID=t1"))) {
            SnapshotReservation reservation = server.streamer.nextReservation();
            client.socket.sendClose(1000, "bye").get(10, TimeUnit.SECONDS);
            client.awaitClose();
            assertTrue(waitUntilClosed(reservation));
            assertFalse(reservation.sendStatus(new SnapshotStatus("s3://foo/bar", "148", "188")));
            // endReservation would raise the cleanup delay and could end a newer reservation of t1.
            assertTrue(server.streamer.endedReservations.isEmpty());
        }
    }

    @Test
    void failureClosesWithInternalError() throws Exception {
        try (TestClient client = new TestClient(server.ws("/replication/v6/snapshot?taskID=t1"))) {
            SnapshotReservation reservation = server.streamer.nextReservation();
            reservation.fail(new IllegalStateException("change log unreadable"));
            TestClient.Close close = client.awaitClose();
            assertEquals(1011, close.code());
            assertEquals("Error: change log unreadable", close.reason());
            assertTrue(reservation.isClosed());
        }
    }

    @Test
    void unavailableSnapshotClosesWithUpstreamReason() throws Exception {
        server.streamer.snapshotUnavailable = SnapshotUnavailableException.NOT_CONFIGURED;
        try (TestClient client = new TestClient(server.ws("/replication/v6/snapshot?taskID=t1"))) {
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals("Error: replication-manager is not configured with a ZERO_LITESTREAM_BACKUP_URL",
                    close.reason());
        }
    }

    @Test
    void unexpectedAckClosesWithProtocolError() throws Exception {
        try (TestClient client = new TestClient(server.ws("/replication/v6/snapshot?taskID=t1"))) {
            SnapshotReservation reservation = server.streamer.nextReservation();
            reservation.sendStatus(new SnapshotStatus("s3://foo/bar", "148", "188"));
            client.next();
            client.ack(1);
            client.ack(2);
            TestClient.Close close = client.awaitClose();
            assertEquals(1002, close.code());
            assertEquals("Error: Unexpected ack for 2: 2", close.reason());
            assertTrue(reservation.isClosed());
        }
    }

    private static boolean waitUntilClosed(SnapshotReservation reservation) throws InterruptedException {
        // The server sees the close frame asynchronously; the reservation has no close signal to wait on.
        for (int i = 0; i < 200 && !reservation.isClosed(); i++) {
            TimeUnit.MILLISECONDS.sleep(50);
        }
        return reservation.isClosed();
    }
}
