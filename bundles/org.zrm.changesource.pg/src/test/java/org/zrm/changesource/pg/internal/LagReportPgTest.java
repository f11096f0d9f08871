package org.zrm.changesource.pg.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.zrm.changesource.pg.internal.SourceFixture.*;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.StatusMessage;
import org.zrm.protocol.LagReport;
import org.zrm.testing.PgDatabase;
import org.zrm.testing.PostgresTest;

/** Port of {@code change-source.pg.test.ts} → "replication lag reports: received". */
@PostgresTest
class LagReportPgTest {

    @Test
    void replicationLagReportsReceived(PgDatabase db) throws Exception {
        long interval = 300;
        PgChangeSource source = source(settings(db.uri()).withLagReportIntervalMs(interval));
        try (Connection c = db.connect()) {
            exec(c, "CREATE TABLE lag(id INT PRIMARY KEY)", "CREATE PUBLICATION lag_pub FOR TABLE lag");
            String start = createSlot(c, "lag_slot");
            OptionalLong first = source.startLagReporter();
            assertTrue(first.isPresent());
            PgChangeStream stream = source.openStream("lag_slot", List.of("lag_pub"), start);
            List<StatusMessage> reports = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            int id = 0;
            while (reports.size() < 3) {
                assertTrue(System.nanoTime() < deadline, "lag reports missing, got " + reports.size());
                ChangeStreamMessage m = stream.poll(Duration.ofMillis(200));
                if (m == null) {
                    // Before PG 17 the report's WAL record waits for the next flush (upstream's
                    // checkCurrentLSN exists for this); a commit provides one.
                    exec(c, "INSERT INTO lag VALUES (" + (++id) + ")");
                } else if (m instanceof StatusMessage s && s.status().lagReport() != null) {
                    reports.add(s);
                } else if (m instanceof ChangeStreamMessage.CommitMessage commit) {
                    ackCommit(stream, commit);
                }
            }
            for (int i = 0; i < reports.size(); i++) {
                StatusMessage s = reports.get(i);
                LagReport r = s.status().lagReport();
                assertEquals(Boolean.FALSE, s.status().ack());
                assertEquals(Math.max(r.lastTimings().receiveTimeMs(), r.lastTimings().sendTimeMs() + interval),
                        r.nextSendTimeMs());
                assertTrue(r.lastTimings().commitTimeMs() >= r.lastTimings().sendTimeMs() - 1000);
                assertTrue(r.lastTimings().receiveTimeMs() >= r.lastTimings().sendTimeMs());
                if (i > 0) {
                    LagReport prev = reports.get(i - 1).status().lagReport();
                    assertTrue(r.lastTimings().sendTimeMs() >= prev.nextSendTimeMs() - 1, "paced by nextSendTimeMs");
                    assertTrue(s.watermark().compareTo(reports.get(i - 1).watermark()) > 0, "watermarks increase");
                }
            }
            assertTrue(first.getAsLong() <= reports.get(0).status().lagReport().lastTimings().sendTimeMs());
            String json = CODEC.encode(reports.get(0));
            assertTrue(json.startsWith("[\"status\",{\"ack\":false,\"lagReport\":{\"lastTimings\":{\"sendTimeMs\":"), json);
        } finally {
            source.stop();
        }
    }

    @Test
    void disabledWhenIntervalIsNotPositive(PgDatabase db) {
        PgChangeSource source = source(settings(db.uri()).withLagReportIntervalMs(0));
        assertFalse(source.startLagReporter().isPresent());
        source.stop();
    }
}
