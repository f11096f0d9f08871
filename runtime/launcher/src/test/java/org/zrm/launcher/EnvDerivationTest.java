package org.zrm.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class EnvDerivationTest {
    private final EnvDerivation derivation = new EnvDerivation();

    @Test
    void portsDeriveFromTheDefaultZeroPort() {
        EnvDerivation.Result r = derivation.derive(Map.of());
        assertEquals("4849", r.environment().get("ZERO_CHANGE_STREAMER_PORT"));
        assertEquals("4850", r.environment().get("ZERO_LITESTREAM_PORT"));
        assertEquals(Set.of("ZERO_CHANGE_STREAMER_PORT", "ZERO_LITESTREAM_PORT", "ZRM_REPLICATOR_UPSTREAM"), r.derived());
        assertEquals("in-process", r.environment().get("ZRM_REPLICATOR_UPSTREAM"));
        assertNull(r.environment().get("ZERO_CHANGE_DB"), "nothing to derive it from");
    }

    @Test
    void portsDeriveFromAGivenZeroPortAndSetValuesWin() {
        EnvDerivation.Result r = derivation.derive(Map.of("ZERO_PORT", "5000", "ZERO_LITESTREAM_PORT", "6000"));
        assertEquals("5001", r.environment().get("ZERO_CHANGE_STREAMER_PORT"));
        assertEquals("6000", r.environment().get("ZERO_LITESTREAM_PORT"));
        assertEquals(Set.of("ZERO_CHANGE_STREAMER_PORT", "ZRM_REPLICATOR_UPSTREAM"), r.derived());
    }

    @Test
    void changeDbDefaultsToTheUpstream() {
        String upstream = "postgresql://u:p@db.example/app";
        EnvDerivation.Result r = derivation.derive(Map.of("ZERO_UPSTREAM_DB", upstream, "OTHER", "kept"));
        assertEquals(upstream, r.environment().get("ZERO_CHANGE_DB"));
        assertEquals("kept", r.environment().get("OTHER"));

        EnvDerivation.Result explicit = derivation.derive(Map.of("ZERO_UPSTREAM_DB", upstream, "ZERO_CHANGE_DB", "postgresql://c/cdc"));
        assertEquals("postgresql://c/cdc", explicit.environment().get("ZERO_CHANGE_DB"));
        assertFalse(explicit.derived().contains("ZERO_CHANGE_DB"));
    }

    @Test
    void anUnparsablePortDerivesNothing() {
        EnvDerivation.Result r = derivation.derive(Map.of("ZERO_PORT", "http"));
        assertNull(r.environment().get("ZERO_CHANGE_STREAMER_PORT"));
        assertEquals(Set.of("ZRM_REPLICATOR_UPSTREAM"), r.derived());
    }

    @Test
    void aChangeStreamerUriSelectsTheRemoteReplicatorUpstreamUnlessItIsSet() {
        assertEquals("remote", derivation.derive(Map.of("ZERO_CHANGE_STREAMER_URI", "ws://rm:4849"))
                .environment().get("ZRM_REPLICATOR_UPSTREAM"));
        EnvDerivation.Result pinned = derivation.derive(Map.of("ZERO_CHANGE_STREAMER_URI", "ws://rm:4849",
                "ZRM_REPLICATOR_UPSTREAM", "in-process"));
        assertEquals("in-process", pinned.environment().get("ZRM_REPLICATOR_UPSTREAM"));
        assertFalse(pinned.derived().contains("ZRM_REPLICATOR_UPSTREAM"));
    }
}
