package org.zrm.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.zrm.pgcluster.PgCluster;

/**
 * Runs two fixture-using classes in a JUnit run of their own and checks what they saw: one cluster,
 * one database per class, and everything cleaned up when that run ends.
 */
class DatabasePerClassTest {

    @Test
    void eachClassGetsItsOwnDatabaseInOneClusterAndTheRunCleansUp() {
        List<Map<String, String>> reports = new ArrayList<>();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(First.class), selectClass(Second.class)).build(),
                summary, new TestExecutionListener() {
                    @Override
                    public void reportingEntryPublished(TestIdentifier test, ReportEntry entry) {
                        reports.add(entry.getKeyValuePairs());
                    }
                });
        assertEquals(4, summary.getSummary().getTestsSucceededCount(), () -> failures(summary));

        Set<String> firstDbs = new TreeSet<>();
        Set<String> secondDbs = new TreeSet<>();
        Set<String> clusters = new TreeSet<>();
        for (Map<String, String> r : reports) {
            (r.get("class").equals("First") ? firstDbs : secondDbs).add(r.get("db"));
            clusters.add(r.get("dataDir"));
        }
        assertEquals(1, firstDbs.size(), "both tests of First share one database: " + firstDbs);
        assertEquals(1, secondDbs.size(), "both tests of Second share one database: " + secondDbs);
        assertNotEquals(firstDbs, secondDbs, "each class has its own database");
        assertEquals(1, clusters.size(), "one cluster for the whole run: " + clusters);
        assertFalse(Files.exists(Path.of(clusters.iterator().next())), "the run's end stopped and deleted the cluster");
    }

    private static String failures(SummaryGeneratingListener summary) {
        StringBuilder text = new StringBuilder();
        summary.getSummary().getFailures().forEach(f -> text.append(f.getTestIdentifier().getDisplayName())
                .append(": ").append(f.getException()).append('\n'));
        return text.toString();
    }

    private static void report(TestReporter reporter, String clazz, PgCluster cluster, PgDatabase db) {
        reporter.publishEntry(Map.of("class", clazz, "db", db.name(), "dataDir", cluster.dataDir().toString()));
    }

    // Static nested classes: surefire and the outer class's own run skip them; only the launcher above runs them.

    @PostgresTest
    static class First {
        @Test
        void one(PgCluster cluster, PgDatabase db, TestReporter reporter) {
            report(reporter, "First", cluster, db);
        }

        @Test
        void two(PgCluster cluster, PgDatabase db, TestReporter reporter) {
            report(reporter, "First", cluster, db);
        }
    }

    @PostgresTest
    static class Second {
        @Test
        void one(PgCluster cluster, PgDatabase db, TestReporter reporter) {
            report(reporter, "Second", cluster, db);
        }

        @Test
        void two(PgCluster cluster, PgDatabase db, TestReporter reporter) throws Exception {
            report(reporter, "Second", cluster, db);
        }
    }
}
