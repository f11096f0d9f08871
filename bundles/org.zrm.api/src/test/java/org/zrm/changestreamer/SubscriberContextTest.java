package org.zrm.changestreamer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Query-parameter parsing per change-streamer spec §2.2, with upstream's error texts. */
class SubscriberContextTest {

    private static final String PATH = "/replication/v6/changes";

    @Test
    void parsesTheSpecExample() {
        SubscriberContext ctx = SubscriberContext.parse(PATH, query(
                "taskID", "task-abc", "id", "serving-replicator-1234", "mode", "serving",
                "watermark", "4e672g", "replicaVersion", "4e5k00", "initial", "true"));
        assertEquals(new SubscriberContext(6, "serving-replicator-1234", "task-abc", ReplicatorMode.SERVING,
                "4e5k00", "4e672g", true), ctx);
    }

    @ParameterizedTest
    @CsvSource(value = {"backup, BACKUP", "serving, SERVING", "BACKUP, SERVING", "Backup, SERVING", "other, SERVING",
        "'', SERVING", "NULL, SERVING"}, nullValues = "NULL")
    void onlyBackupSelectsBackupMode(String mode, ReplicatorMode expected) {
        Map<String, List<String>> q = required();
        if (mode != null) {
            q.put("mode", List.of(mode));
        }
        assertEquals(expected, SubscriberContext.parse(PATH, q).mode());
    }

    @ParameterizedTest
    @CsvSource(value = {"true, true", "TRUE, false", "True, false", "1, false", "false, false", "yes, false",
        "'', false", "NULL, false"}, nullValues = "NULL")
    void onlyTrueIsInitial(String initial, boolean expected) {
        Map<String, List<String>> q = required();
        if (initial != null) {
            q.put("initial", List.of(initial));
        }
        assertEquals(expected, SubscriberContext.parse(PATH, q).initial());
    }

    @ParameterizedTest
    @NullAndEmptySource
    void emptyOrMissingTaskIdIsNull(String taskID) {
        Map<String, List<String>> q = required();
        if (taskID != null) {
            q.put("taskID", List.of(taskID));
        }
        assertNull(SubscriberContext.parse(PATH, q).taskID());
    }

    @ParameterizedTest
    @ValueSource(strings = {"id", "replicaVersion", "watermark"})
    void requiredParametersMustBeNonEmpty(String name) {
        Map<String, List<String>> missing = required();
        missing.remove(name);
        assertEquals("invalid querystring - missing " + name,
                assertThrows(IllegalArgumentException.class, () -> SubscriberContext.parse(PATH, missing)).getMessage());
        Map<String, List<String>> empty = required();
        empty.put(name, List.of(""));
        assertEquals("invalid querystring - missing " + name,
                assertThrows(IllegalArgumentException.class, () -> SubscriberContext.parse(PATH, empty)).getMessage());
    }

    @Test
    void requiredParametersAreCheckedInUpstreamOrder() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SubscriberContext.parse(PATH, query("watermark", "01")));
        assertEquals("invalid querystring - missing id", e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"/replication/v1/changes, 1", "/replication/v6/changes, 6", "/replication/v06/changes, 6",
        "/base/replication/v3/changes, 3", "/replication/v4/snapshot, 4"})
    void acceptsProtocolVersionsOneToSix(String path, int version) {
        assertEquals(version, SubscriberContext.protocolVersionOf(path));
        assertEquals(version, SubscriberContext.parse(path, required()).protocolVersion());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "7", "99999999999999999999"})
    void rejectsUnsupportedProtocolVersionsWithUpstreamText(String v) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SubscriberContext.parse("/replication/v" + v + "/changes", required()));
        assertEquals("Cannot service client at protocol v" + v + ". Supported protocols: [v1 ... v6]", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/replication/vx/changes", "/replication/v6/changes/", "/replication/v6/other",
        "/replication/6/changes", "/replication/v-1/changes", "/"})
    void rejectsInvalidPaths(String path) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SubscriberContext.parse(path, required()));
        assertEquals("invalid path: " + path, e.getMessage());
    }

    @Test
    void pathIsCheckedBeforeParameters() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SubscriberContext.parse("/replication/v7/changes", Map.of()));
        assertTrue(e.getMessage().startsWith("Cannot service client at protocol v7"), e.getMessage());
    }

    @Test
    void firstValueOfARepeatedParameterWins() {
        Map<String, List<String>> q = required();
        q.put("mode", List.of("backup", "serving"));
        q.put("id", List.of("first", "second"));
        SubscriberContext ctx = SubscriberContext.parse(PATH, q);
        assertEquals(ReplicatorMode.BACKUP, ctx.mode());
        assertEquals("first", ctx.id());
    }

    @Test
    void clientParametersRoundTrip() {
        SubscriberContext ctx = new SubscriberContext(6, "backup-1", null, ReplicatorMode.BACKUP, "4e5k00", "4e672g", false);
        Map<String, String> params = ctx.toQueryParameters();
        assertEquals("", params.get("taskID"), "taskID is always sent");
        assertEquals("false", params.get("initial"));
        assertEquals("backup", params.get("mode"));
        Map<String, List<String>> q = new HashMap<>();
        params.forEach((k, v) -> q.put(k, List.of(v)));
        assertEquals(ctx, SubscriberContext.parse(PATH, q));
    }

    @Test
    void constructorValidates() {
        assertThrows(IllegalArgumentException.class,
                () -> new SubscriberContext(6, "id", "", ReplicatorMode.SERVING, "01", "01", false));
        assertThrows(IllegalArgumentException.class,
                () -> new SubscriberContext(7, "id", null, ReplicatorMode.SERVING, "01", "01", false));
        assertThrows(NullPointerException.class,
                () -> new SubscriberContext(6, null, null, ReplicatorMode.SERVING, "01", "01", false));
        assertFalse(new SubscriberContext(1, "id", "t", ReplicatorMode.SERVING, "01", "01", false).initial());
    }

    @Test
    void modeWireNames() {
        assertEquals("serving", ReplicatorMode.SERVING.wireName());
        assertEquals("backup", ReplicatorMode.BACKUP.wireName());
        assertEquals(ReplicatorMode.BACKUP, ReplicatorMode.fromQueryParameter("backup"));
        assertEquals(ReplicatorMode.SERVING, ReplicatorMode.fromQueryParameter(null));
    }

    private static Map<String, List<String>> required() {
        return query("id", "sub-1", "replicaVersion", "4e5k00", "watermark", "4e672g");
    }

    private static Map<String, List<String>> query(String... kv) {
        Map<String, List<String>> q = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            q.put(kv[i], List.of(kv[i + 1]));
        }
        return q;
    }
}
