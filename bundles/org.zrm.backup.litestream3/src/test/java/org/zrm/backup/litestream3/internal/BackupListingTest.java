package org.zrm.backup.litestream3.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Zero's {@code commands.test.ts}, {@code parseBackupCreatedTimes}. */
class BackupListingTest {

    private final List<String> warnings = new ArrayList<>();

    @Test
    void parsesTheCreatedColumnFromSnapshotOutput() {
        String output = "replica  generation        index  size     created\n"
                + "s3       1862f44967b3863f  0      4546445  2026-06-10T01:11:32Z\n";
        assertEquals(List.of(Instant.parse("2026-06-10T01:11:32Z")),
                BackupListing.parseBackupCreatedTimes("snapshots", output, warnings::add));
        assertEquals(List.of(), warnings);
    }

    @Test
    void parsesTheCreatedColumnLastFromWalOutputWithExtraColumns() {
        String output = "replica  generation        index  offset  size  created\n"
                + "s3       1862f44967b3863f  0      0       100   2026-06-10T01:11:32Z\n"
                + "s3       1862f44967b3863f  1      4096    200   2026-06-10T01:12:00Z\n";
        assertEquals(List.of(Instant.parse("2026-06-10T01:11:32Z"), Instant.parse("2026-06-10T01:12:00Z")),
                BackupListing.parseBackupCreatedTimes("wal", output, warnings::add));
    }

    @Test
    void skipsTheHeaderBlankLinesAndShortLines() {
        String output = "\n"
                + "replica  generation        index  size     created\n"
                + "\n"
                + "   \n"
                + "lonely\n"
                + "s3       1862f44967b3863f  0      4546445  2026-06-10T01:11:32Z\n";
        assertEquals(List.of(Instant.parse("2026-06-10T01:11:32Z")),
                BackupListing.parseBackupCreatedTimes("snapshots", output, warnings::add));
        assertEquals(List.of(), warnings);
    }

    @Test
    void returnsEmptyForEmptyOrHeaderOnlyOutput() {
        assertEquals(List.of(), BackupListing.parseBackupCreatedTimes("snapshots", "", warnings::add));
        assertEquals(List.of(), BackupListing.parseBackupCreatedTimes("snapshots",
                "replica  generation  index  size  created\n", warnings::add));
        assertEquals(List.of(), warnings);
    }

    @Test
    void warnsAndSkipsLinesWithAnUnparseableCreatedTime() {
        String output = "replica  generation        index  size     created\n"
                + "s3       1862f44967b3863f  0      4546445  not-a-date\n"
                + "s3       1862f44967b3863f  1      4546445  2026-06-10T01:12:00Z\n";
        assertEquals(List.of(Instant.parse("2026-06-10T01:12:00Z")),
                BackupListing.parseBackupCreatedTimes("snapshots", output, warnings::add));
        assertEquals(List.of("unexpected line in litestream snapshots output: "
                + "s3       1862f44967b3863f  0      4546445  not-a-date"), warnings);
    }

    @Test
    void acceptsOffsetsTabsAndFractionalSeconds() {
        String output = "file\tgen\t0\t1\t2026-06-10T03:11:32+02:00\r\n"
                + "file gen 1 2 2026-06-10T01:11:33.5Z\n";
        assertEquals(List.of(Instant.parse("2026-06-10T01:11:32Z"), Instant.parse("2026-06-10T01:11:33.500Z")),
                BackupListing.parseBackupCreatedTimes("wal", output, warnings::add));
    }
}
