package org.zrm.backup.vfs.internal.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** {@code buildLitestreamVfsReplicaURL} (spec §3.2, {@code vfs-watermark-reader.test.ts}). */
class ReplicaUrlTest {

    @Test
    void returnsBackupUrlUnchangedWhenNoEndpointOrRegionAreConfigured() {
        assertEquals("s3://bucket/path", ReplicaUrl.build("s3://bucket/path", null, null));
        assertEquals("s3://bucket/path", ReplicaUrl.build("s3://bucket/path", "", ""));
    }

    @Test
    void addsEndpointAndRegionQueryParamsForS3Backups() {
        assertEquals("s3://bucket/path/to/db?endpoint=https%3A%2F%2Fexample.com&region=us-east-2",
                ReplicaUrl.build("s3://bucket/path/to/db", "https://example.com", "us-east-2"));
    }

    @Test
    void doesNotOverwriteEndpointOrRegionAlreadyPresentInTheBackupUrl() {
        assertEquals("s3://bucket/path?endpoint=http%3A%2F%2Foriginal&region=us-west-1",
                ReplicaUrl.build("s3://bucket/path?endpoint=http%3A%2F%2Foriginal&region=us-west-1",
                        "https://ignored.example.com", "us-east-2"));
    }

    @Test
    void doesNotApplyS3EndpointSettingsToNonS3Backups() {
        assertEquals("file:///tmp/litestream",
                ReplicaUrl.build("file:///tmp/litestream", "https://ignored.example.com", "us-east-2"));
    }

    @Test
    void addsOnlyTheMissingParameterAndKeepsTheFragmentLast() {
        assertEquals("s3://bucket/db?region=eu-west-1&endpoint=http%3A%2F%2F127.0.0.1%3A9000#f",
                ReplicaUrl.build("s3://bucket/db?region=eu-west-1#f", "http://127.0.0.1:9000", "us-east-2"));
        assertEquals("s3://bucket/db?region=a+b", ReplicaUrl.build("s3://bucket/db", null, "a b"));
    }

    @Test
    void rejectsABackupUrlThatIsNoUrlWhenParametersAreToBeAdded() {
        assertEquals("litestream.backupURL is not a URL: bucket/path", assertThrows(IllegalArgumentException.class,
                () -> ReplicaUrl.build("bucket/path", "https://example.com", null)).getMessage());
    }
}
