package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class EnvValidatorTest {
    private final EnvValidator validator = new EnvValidator();

    @Test
    void aValidEnvironmentHasNoProblems() {
        assertEquals(List.of(), validator.validate(Map.of("ZERO_PORT", "4848", "ZERO_APP_ID", "my_app_2",
                "ZERO_CHANGE_LOG_BATCH_SIZE", "1", "ZERO_SHARD_NUM", "0", "ZERO_UPSTREAM_DB", "postgres://h/db",
                "ZRM_EMBEDDED_PG_PORT", "65535")));
        assertEquals(List.of(), validator.validate(Map.of()));
    }

    @Test
    void reportsOneLinePerProblem() {
        List<String> problems = validator.validate(Map.of(
                "ZERO_PORT", "http",
                "ZERO_CHANGE_STREAMER_PORT", "70000",
                "ZERO_LITESTREAM_PORT", "0",
                "ZERO_APP_ID", "My-App",
                "ZERO_CHANGE_LOG_BATCH_SIZE", "0",
                "ZERO_SHARD_NUM", "-1",
                "ZERO_SHARD_ID", "abc"));
        assertEquals(7, problems.size(), problems::toString);
        assertTrue(problems.contains("ZERO_PORT must be a port number (an integer from 1 to 65535), got 'http'"), problems::toString);
        assertTrue(problems.contains("ZERO_CHANGE_STREAMER_PORT must be a port number (an integer from 1 to 65535), got '70000'"));
        assertTrue(problems.contains("ZERO_LITESTREAM_PORT must be a port number (an integer from 1 to 65535), got '0'"));
        assertTrue(problems.contains("ZERO_APP_ID must match ^[a-z0-9_]+$ (lower-case letters, digits, underscores), got 'My-App'"));
        assertTrue(problems.contains("ZERO_CHANGE_LOG_BATCH_SIZE must be an integer >= 1, got '0'"));
        assertTrue(problems.contains("ZERO_SHARD_NUM must be an integer >= 0, got '-1'"));
        assertTrue(problems.contains("ZERO_SHARD_ID is no longer an option. Please use ZERO_APP_ID instead."));
    }

    @Test
    void upstreamMustBeAPostgresUriForThePgTypeAndIsMaskedInTheMessage() {
        List<String> problems = validator.validate(Map.of("ZERO_UPSTREAM_DB", "mysql://root:hunter2@h/db"));
        assertEquals(List.of("ZERO_UPSTREAM_DB must be a postgresql:// or postgres:// URI, got 'mysql://root:****@h/db'"), problems);
        assertEquals(List.of(), validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "custom", "ZERO_UPSTREAM_DB", "http://source:9000",
                "ZERO_CHANGE_DB", "postgres://h/cdb")));
        // Third-party types come as bundles: any filter-safe name passes; the runtime reports a missing one.
        assertEquals(List.of(), validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "mysql")));
        assertEquals(List.of("ZERO_UPSTREAM_TYPE must be a change-source type (letters, digits, '.', '_' or '-'), such as pg,"
                + " got 'pg)(x=1'"), validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "pg)(x=1")));
        assertEquals(List.of(), validator.validate(Map.of("ZERO_CHANGE_STREAMER_URI", "http://rm:4849")));
        assertEquals(List.of("ZERO_CHANGE_STREAMER_URI must be a ws://, wss://, http:// or https:// URI, got"
                + " 'postgres://u:****@h/db'"), validator.validate(Map.of("ZERO_CHANGE_STREAMER_URI", "postgres://u:pw@h/db")));
    }

    @Test
    void theCustomTypeNeedsAnEndpointUrlAndAChangeDb() {
        assertEquals(List.of("ZERO_UPSTREAM_DB must be the custom change-source endpoint's ws://, wss://, http:// or https://"
                + " URL when ZERO_UPSTREAM_TYPE=custom"), validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "custom")));
        assertEquals(List.of("ZERO_UPSTREAM_DB must be a ws://, wss://, http:// or https:// URL when ZERO_UPSTREAM_TYPE=custom,"
                + " got 'postgres://u:****@h/db'"),
                validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "custom", "ZERO_UPSTREAM_DB", "postgres://u:pw@h/db")));
        assertEquals(List.of("ZERO_CHANGE_DB must be set (a postgresql:// URI for the change log) when ZERO_UPSTREAM_TYPE=custom"
                + " and ZERO_UPSTREAM_DB is not a Postgres URI"),
                validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "custom", "ZERO_UPSTREAM_DB", "ws://source:9000/changes/v0/stream")));
        // A third-party type with a non-Postgres address needs the change DB too; without an
        // address the embedded Postgres holds the change log.
        assertEquals(1, validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "jsonl", "ZERO_UPSTREAM_DB", "file:changes")).size());
        assertEquals(List.of(), validator.validate(Map.of("ZERO_UPSTREAM_TYPE", "jsonl")));
    }

    @Test
    void malformedPostgresUrisAreReportedAtLaunchWithThePasswordMasked() {
        assertEquals(List.of("ZERO_UPSTREAM_DB has no host: postgresql://u:****@/db"),
                validator.validate(Map.of("ZERO_UPSTREAM_DB", "postgresql://u:secret@/db")));
        assertEquals(List.of("ZERO_CHANGE_DB must be a postgres:// or postgresql:// URI: http://u:****@h/db"),
                validator.validate(Map.of("ZERO_CHANGE_DB", "http://u:secret@h/db")));
        assertEquals(List.of(), validator.validate(Map.of("ZERO_UPSTREAM_DB", "postgres://u:p%40ss@h/db?sslmode=no-verify",
                "ZERO_CHANGE_DB", "postgresql://h:6432/changes")));
    }
}
