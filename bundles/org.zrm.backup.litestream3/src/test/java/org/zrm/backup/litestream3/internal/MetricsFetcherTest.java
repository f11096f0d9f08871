package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MetricsFetcherTest {

    FakeMetricsServer server;

    @BeforeEach
    void setUp() throws Exception {
        server = new FakeMetricsServer();
    }

    @AfterEach
    void tearDown() {
        server.close();
    }

    MetricsFetcher fetcher(Duration timeout, int maxBytes) {
        return new MetricsFetcher(server.url(), timeout, maxBytes);
    }

    @Test
    void returnsTheBodyOfAnOkResponse() {
        server.setBody("# TYPE g gauge\ng 1\n");
        MetricsFetcher.Result r = fetcher(Duration.ofSeconds(10), 1024).fetch(new StopSignal());
        assertEquals(new MetricsFetcher.Result.Body("# TYPE g gauge\ng 1\n"), r);
    }

    @Test
    void aNonOkStatusFailsWithTheBodyText() {
        server.setStatus(503);
        server.setBody("x".repeat(600));
        MetricsFetcher.Result r = fetcher(Duration.ofSeconds(10), 1024).fetch(new StopSignal());
        assertEquals(new MetricsFetcher.Result.Failed("HTTP 503: " + "x".repeat(512) + "..."), r);
    }

    @Test
    void aBodyOverTheBoundFailsAndIsDiscarded() {
        server.setBody("y".repeat(5000));
        MetricsFetcher.Result r = fetcher(Duration.ofSeconds(10), 4096).fetch(new StopSignal());
        MetricsFetcher.Result.Failed f = assertInstanceOf(MetricsFetcher.Result.Failed.class, r);
        assertTrue(f.reason().contains("response body exceeds 4096 bytes"), f.reason());
        server.setBody("y".repeat(4096));
        assertInstanceOf(MetricsFetcher.Result.Body.class, fetcher(Duration.ofSeconds(10), 4096).fetch(new StopSignal()));
    }

    @Test
    void aHungResponseTimesOut() {
        server.setMode(FakeMetricsServer.Mode.HANG_MID_BODY);
        server.setBody("# TYPE g gauge\ng 1\n");
        MetricsFetcher.Result r = fetcher(Duration.ofMillis(300), 1024).fetch(new StopSignal());
        MetricsFetcher.Result.Failed f = assertInstanceOf(MetricsFetcher.Result.Failed.class, r);
        assertTrue(f.reason().contains("no complete response within 300 ms"), f.reason());
    }

    @Test
    void aRefusedConnectionFails() {
        URI url = server.url();
        server.close();
        MetricsFetcher.Result r = new MetricsFetcher(url, Duration.ofSeconds(5), 1024).fetch(new StopSignal());
        MetricsFetcher.Result.Failed f = assertInstanceOf(MetricsFetcher.Result.Failed.class, r);
        assertTrue(f.reason().startsWith("ConnectException"), f.reason());
    }

    @Test
    void stoppingAbortsAFetchInFlight() throws Exception {
        server.setMode(FakeMetricsServer.Mode.HANG_BEFORE_HEADERS);
        StopSignal signal = new StopSignal();
        AtomicReference<MetricsFetcher.Result> result = new AtomicReference<>();
        Thread t = new Thread(() -> result.set(fetcher(Duration.ofSeconds(60), 1024).fetch(signal)));
        t.start();
        assertTrue(server.awaitHanging());
        signal.stop();
        t.join(10_000);
        assertFalse(t.isAlive());
        assertEquals(new MetricsFetcher.Result.Aborted(), result.get());
    }

    @Test
    void aFetchAfterStopIsAbortedAtOnce() {
        StopSignal signal = new StopSignal();
        signal.stop();
        server.setMode(FakeMetricsServer.Mode.HANG_BEFORE_HEADERS);
        assertEquals(new MetricsFetcher.Result.Aborted(), fetcher(Duration.ofSeconds(60), 1024).fetch(signal));
    }
}
