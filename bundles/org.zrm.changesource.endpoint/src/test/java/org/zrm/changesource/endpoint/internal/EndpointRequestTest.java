package org.zrm.changesource.endpoint.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.zrm.changesource.endpoint.internal.Rejection.Reason;

class EndpointRequestTest {

    private static final EndpointRequest.Served SERVED =
            new EndpointRequest.Served(new ApiKey("k"), "zero", 0, List.of("b", "a"));

    private static Map<String, List<String>> query(String... kv) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("apiKey", List.of("k"));
        m.put("appID", List.of("zero"));
        m.put("shardNum", List.of("0"));
        for (int i = 0; i < kv.length; i += 2) {
            if (kv[i + 1] == null) {
                m.remove(kv[i]);
            } else {
                m.computeIfAbsent(kv[i], x -> new java.util.ArrayList<>());
                m.put(kv[i], new java.util.ArrayList<>(m.get(kv[i]).isEmpty() || List.of("apiKey", "appID", "shardNum")
                        .contains(kv[i]) ? List.of() : m.get(kv[i])));
                m.get(kv[i]).add(kv[i + 1]);
            }
        }
        return m;
    }

    private static Rejection reject(Map<String, List<String>> q) {
        return assertThrows(Rejection.class, () -> EndpointRequest.parse(q, SERVED));
    }

    @Test
    void freshAndResumingRequestsParse() throws Rejection {
        EndpointRequest fresh = EndpointRequest.parse(query("publications", "a", "publications", "b"), SERVED);
        assertFalse(fresh.resuming());
        assertEquals(List.of("a", "b"), fresh.publications());
        EndpointRequest resume = EndpointRequest.parse(query("lastWatermark", "0c", "replicaVersion", "0a"), SERVED);
        assertTrue(resume.resuming());
        assertEquals("0c", resume.lastWatermark());
        assertEquals("0a", resume.replicaVersion());
        assertNull(fresh.lastWatermark());
    }

    @Test
    void apiKeyIsCheckedFirst() {
        Rejection missing = reject(query("apiKey", null, "appID", null));
        assertEquals(Reason.UNAUTHORIZED, missing.reason());
        assertEquals("missing apiKey", missing.getMessage());
        Rejection wrong = reject(query("apiKey", "K", "appID", null));
        assertEquals(Reason.UNAUTHORIZED, wrong.reason());
        assertEquals("invalid apiKey", wrong.getMessage());
    }

    @Test
    void appIdAndShardAreValidatedAgainstTheServedShard() {
        assertEquals("missing appID", reject(query("appID", null)).getMessage());
        assertTrue(reject(query("appID", "Zero!")).getMessage().startsWith("invalid appID \"Zero!\""));
        assertTrue(reject(query("appID", "other")).getMessage().contains("not served here"));
        assertEquals("missing shardNum", reject(query("shardNum", null)).getMessage());
        assertTrue(reject(query("shardNum", "-1")).getMessage().startsWith("invalid shardNum"));
        assertTrue(reject(query("shardNum", "x")).getMessage().startsWith("invalid shardNum"));
        assertTrue(reject(query("shardNum", "99999999999")).getMessage().startsWith("invalid shardNum"));
        assertTrue(reject(query("shardNum", "1")).getMessage().contains("not served here"));
        assertEquals(Reason.BAD_PARAMETERS, reject(query("shardNum", "1")).reason());
    }

    @Test
    void publicationsMustMatchWhenGiven() throws Rejection {
        Rejection r = reject(query("publications", "a"));
        assertEquals(Reason.BAD_PARAMETERS, r.reason());
        assertEquals("publications [a] do not match the replicated publications [b, a]", r.getMessage());
        // none given: zero-cache's empty ZERO_APP_PUBLICATIONS, "whatever is replicated"
        EndpointRequest.parse(query(), SERVED);
    }

    @Test
    void watermarkAndReplicaVersionComeTogether() {
        assertEquals("lastWatermark and replicaVersion must be given together",
                reject(query("lastWatermark", "0c")).getMessage());
        assertEquals("lastWatermark and replicaVersion must be given together",
                reject(query("replicaVersion", "0a")).getMessage());
        Map<String, List<String>> twice = query("lastWatermark", "0c", "replicaVersion", "0a");
        twice.put("lastWatermark", List.of("0c", "0d"));
        assertEquals("lastWatermark given 2 times", reject(twice).getMessage());
    }
}
