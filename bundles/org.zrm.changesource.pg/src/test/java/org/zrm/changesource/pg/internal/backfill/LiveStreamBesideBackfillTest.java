package org.zrm.changesource.pg.internal.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.ChangeStreamClosedException;
import org.zrm.changesource.pg.internal.replication.PgOutputMessage;
import org.zrm.changesource.pg.internal.stream.ChangeMaker;
import org.zrm.changesource.pg.internal.stream.PgChangeStream;
import org.zrm.protocol.Backfill;
import org.zrm.protocol.BackfillRequest;
import org.zrm.protocol.BackfillId;
import org.zrm.protocol.ChangeStreamMessage;
import org.zrm.protocol.ChangeStreamMessage.BeginMessage;
import org.zrm.protocol.ChangeStreamMessage.CommitMessage;
import org.zrm.protocol.DataOrSchemaChange;
import org.zrm.protocol.Passthrough;
import org.zrm.protocol.Relation;
import org.zrm.protocol.ReplicaIdentity;
import org.zrm.protocol.RowKey;
import org.zrm.protocol.TableMetadata;

/**
 * The live replication stream and an endless backfill share one {@link PgChangeStream}: the live
 * transactions all get through while the backfill keeps running, each transaction stays contiguous,
 * and watermarks keep increasing. The pump is simulated on a thread of the test, driving the stream
 * exactly as {@code ReplicationStream} does (hasRoom, onMessage, flush).
 */
class LiveStreamBesideBackfillTest {

    private static final int LIVE_TRANSACTIONS = 300;

    private static final PgOutputMessage.RelationInfo REL = new PgOutputMessage.RelationInfo(1, "public", "live",
            ReplicaIdentity.DEFAULT, List.of(), List.of("id"), new Relation("public", "live", new RowKey(List.of("id"))));

    /** A backfill that never ends on its own: 100-row messages until closed. */
    static final class EndlessRun implements BackfillRun {
        final AtomicBoolean closed = new AtomicBoolean();
        final AtomicLong messages = new AtomicLong();

        @Override
        public String watermark() {
            return "0a";
        }

        @Override
        public DataOrSchemaChange next() throws ChangeStreamClosedException {
            if (closed.get()) {
                throw new ChangeStreamClosedException("run closed");
            }
            List<List<Object>> rows = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                rows.add(List.of((Object) ("k" + i), "value-" + i));
            }
            messages.incrementAndGet();
            return new Backfill(new Relation("public", "big", new RowKey(List.of("id"))), List.of("v"), "0a", rows, null,
                    Passthrough.NONE);
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    @Test
    void liveTransactionsFlowWhileABackfillRuns() throws Exception {
        ChangeMaker maker = new ChangeMaker("zero", 0, (lsn, msg) -> List.of());
        // Small bounds, so that back-pressure, the pump's waiting and the backfill's waiting all occur.
        PgChangeStream stream = new PgChangeStream("test", "0a", maker, null, 64, 256 * 1024, null);
        EndlessRun run = new EndlessRun();
        BackfillManager manager = new BackfillManager("test", stream.multiplexer(), r -> run);
        stream.multiplexer().addListener(manager).addProducer(manager);
        BackfillRequest request = new BackfillRequest(new BackfillRequest.Table("public", "big",
                new TableMetadata(Map.of("id", Map.of("attNum", 1)), Passthrough.NONE)),
                Map.of("v", new BackfillId(Map.of("attNum", 2))));
        manager.run("0a", List.of(request));

        AtomicReference<Throwable> pumpFailure = new AtomicReference<>();
        Thread pump = new Thread(() -> {
            try {
                long lsn = 0x1000;
                for (int i = 0; i < LIVE_TRANSACTIONS; i++) {
                    while (!stream.hasRoom()) {
                        // ReplicationStream parks until woken or its timer fires; the test just naps.
                        LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                    }
                    long commit = lsn + 0x10;
                    stream.onMessage(lsn, new PgOutputMessage.Begin(commit, 0, i), 32);
                    stream.onMessage(lsn + 1, new PgOutputMessage.Insert(REL, Map.of("id", (Object) i)), 32);
                    stream.onMessage(commit, new PgOutputMessage.Commit(0, commit, commit + 8, 0), 32);
                    stream.flush(i % 3 == 0); // sometimes drained, sometimes more at hand
                    lsn += 0x100;
                }
                while (!stream.hasRoom()) {
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                }
                stream.flush(true);
            } catch (Throwable t) {
                pumpFailure.set(t);
            }
        }, "test-pump");
        pump.start();

        int live = 0;
        int backfillTransactions = 0;
        String lastCommit = "0a";
        String openTx = null;
        boolean openIsBackfill = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (live < LIVE_TRANSACTIONS) {
            assertTrue(System.nanoTime() < deadline, "live transactions stalled at " + live);
            ChangeStreamMessage m = stream.poll(Duration.ofSeconds(10));
            assertNotNull(m, "nothing for 10 s after " + live + " live transactions");
            if (m instanceof BeginMessage b) {
                assertNull(openTx, "a transaction began inside another");
                openTx = b.commitWatermark();
                openIsBackfill = b.begin().skipsAck();
                assertTrue(openTx.compareTo(lastCommit) > 0, openTx + " after " + lastCommit);
            } else if (m instanceof CommitMessage c) {
                assertEquals(openTx, c.watermark());
                lastCommit = c.watermark();
                if (openIsBackfill) {
                    backfillTransactions++;
                } else {
                    live++;
                }
                openTx = null;
            } else if (m instanceof ChangeStreamMessage.DataMessage d) {
                assertNotNull(openTx, "data outside a transaction");
                assertEquals(openIsBackfill, d.change() instanceof Backfill, "rows of one producer only");
            }
        }
        pump.join(TimeUnit.SECONDS.toMillis(10));
        assertNull(pumpFailure.get());
        assertFalse(run.closed.get(), "the backfill was still running when the live stream was through");
        assertTrue(backfillTransactions > 0, "the backfill got its share of the stream");
        System.out.printf("live=%d backfillTransactions=%d backfillMessages=%d pumpWaits=%d maxPumpWait=%.1fms%n",
                live, backfillTransactions, run.messages.get(), stream.multiplexer().replicationWaits(),
                stream.multiplexer().maxReplicationWaitNanos() / 1e6);

        stream.close();
        assertTrue(manager.awaitTermination(Duration.ofSeconds(10)), "closing the stream ends the backfill thread");
        assertTrue(run.closed.get(), "closing the stream closed the run");
    }
}
