package org.zrm.backup.vfs.internal.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.zrm.backup.vfs.internal.watermark.BackupWatermark;
import org.zrm.backup.vfs.internal.watermark.WatermarkSource;
import org.zrm.backup.vfs.internal.watermark.WireCodec;

/** The child's request loop (spec §3.3 worker service, {@code vfs-watermark-worker.test.ts}). */
class ReaderServiceTest {

    private static final BackupWatermark W = new BackupWatermark("04", 123L, "0000000000000004", 2, 1000);

    private final WireCodec codec = new WireCodec();
    /** What happened, in order: lines sent ("sent ...") and source calls. */
    private final List<String> events = new ArrayList<>();
    private final ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();

    private final class Source implements WatermarkSource {
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        final RuntimeException failure;

        Source(RuntimeException failure) {
            this.failure = failure;
        }

        @Override
        public BackupWatermark readWatermark() {
            reads.incrementAndGet();
            if (failure != null) {
                throw failure;
            }
            return W;
        }

        @Override
        public void close() {
            closes.incrementAndGet();
            record("close");
        }
    }

    private synchronized void record(String event) {
        events.add(event);
    }

    /** A PrintStream that records each line it is sent. */
    private PrintStream out() {
        return new PrintStream(new OutputStream() {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();

            @Override
            public void write(int b) {
                if (b == '\n') {
                    record("sent " + line.toString(StandardCharsets.UTF_8));
                    line.reset();
                } else {
                    line.write(b);
                }
            }
        }, true, StandardCharsets.UTF_8);
    }

    private void run(ReaderService.SourceFactory factory, String... input) throws InterruptedException {
        String text = input.length == 0 ? "" : String.join("\n", input) + "\n";
        new ReaderService(codec, out(), factory, new PrintStream(diagnostics, true, StandardCharsets.UTF_8))
                .run(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void respondsToWatermarkRequests() throws Exception {
        Source source = new Source(null);

        run(() -> source, codec.request("1"));

        assertEquals(List.of("sent " + codec.ready(), "sent " + codec.result("1", W), "close"), events);
        assertEquals(1, source.reads.get());
        assertEquals(1, source.closes.get(), "end of input closes the source once");
    }

    @Test
    void sendsReadyBeforeConstructingTheWatermarkSource() throws Exception {
        Source source = new Source(null);
        AtomicInteger opened = new AtomicInteger();

        run(() -> {
            opened.incrementAndGet();
            record("open");
            return source;
        }, codec.request("1"), codec.request("2"));

        assertEquals(List.of("sent " + codec.ready(), "open", "sent " + codec.result("1", W),
                "sent " + codec.result("2", W), "close"), events);
        assertEquals(1, opened.get(), "built once, on the first request");
    }

    @Test
    void neverBuildsTheSourceWithoutARequest() throws Exception {
        AtomicInteger opened = new AtomicInteger();

        run(() -> {
            opened.incrementAndGet();
            return new Source(null);
        });

        assertEquals(List.of("sent " + codec.ready()), events);
        assertEquals(0, opened.get());
    }

    @Test
    void rejectsRequestWhenSourceThrows() throws Exception {
        run(() -> new Source(new IllegalStateException("boom")), codec.request("7"));

        assertEquals("sent " + codec.error("7", "IllegalStateException", "boom"), events.get(1));
    }

    @Test
    void aSourceThatFailedToBuildIsNotKept() throws Exception {
        AtomicInteger opened = new AtomicInteger();

        run(() -> {
            if (opened.incrementAndGet() == 1) {
                throw new java.nio.file.NoSuchFileException("/opt/litestream-vfs.so");
            }
            return new Source(null);
        }, codec.request("1"), codec.request("2"));

        assertEquals(List.of("sent " + codec.ready(), "sent " + codec.error("1", "NoSuchFileException",
                "/opt/litestream-vfs.so"), "sent " + codec.result("2", W), "close"), events);
        assertEquals(2, opened.get());
    }

    @Test
    void ignoresInputThatIsNotARequest() throws Exception {
        run(() -> new Source(null), "hello", codec.ready(), "x".repeat(ReaderService.MAX_LINE_BYTES + 1),
                codec.request("3"));

        assertEquals(List.of("sent " + codec.ready(), "sent " + codec.result("3", W), "close"), events);
        String notes = diagnostics.toString(StandardCharsets.UTF_8);
        assertTrue(notes.contains("ignoring input that is not a request: hello"), notes);
        assertTrue(notes.contains("ignoring unexpected message " + codec.ready()), notes);
        assertTrue(notes.contains("skipping an input line longer than " + ReaderService.MAX_LINE_BYTES + " bytes"), notes);
    }

    @Test
    void answersRequestsBeyondTheQueueBoundWithAnError() throws Exception {
        CountDownLatch busyAnswered = new CountDownLatch(1);
        String busy = codec.error("18", "Error", "backup watermark reader is busy: "
                + ReaderService.MAX_QUEUED_REQUESTS + " requests already waiting");
        WatermarkSource blocking = new WatermarkSource() {
            @Override
            public BackupWatermark readWatermark() throws InterruptedException {
                // the first read holds the worker until the overflowing request has been refused
                assertTrue(busyAnswered.await(20, TimeUnit.SECONDS));
                return W;
            }

            @Override
            public void close() {
            }
        };
        PrintStream out = new PrintStream(new OutputStream() {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();

            @Override
            public void write(int b) {
                if (b != '\n') {
                    line.write(b);
                    return;
                }
                String s = line.toString(StandardCharsets.UTF_8);
                line.reset();
                record(s);
                if (s.equals(busy)) {
                    busyAnswered.countDown();
                }
            }
        }, true, StandardCharsets.UTF_8);
        List<String> requests = new ArrayList<>();
        for (int i = 1; i <= ReaderService.MAX_QUEUED_REQUESTS + 2; i++) {
            requests.add(codec.request(Integer.toString(i)));
        }

        new ReaderService(codec, out, () -> blocking, new PrintStream(diagnostics, true, StandardCharsets.UTF_8))
                .run(new ByteArrayInputStream((String.join("\n", requests) + "\n").getBytes(StandardCharsets.UTF_8)));

        assertEquals(busy, events.get(1), "request 18 found the worker busy and 16 waiting");
        assertEquals(ReaderService.MAX_QUEUED_REQUESTS + 3, events.size(), "ready, the refusal and 17 results");
    }
}
