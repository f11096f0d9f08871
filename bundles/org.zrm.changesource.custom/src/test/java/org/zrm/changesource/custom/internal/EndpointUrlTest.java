package org.zrm.changesource.custom.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class EndpointUrlTest {

    @Test
    void initialSyncCarriesAppShardAndOnePublicationsEach() {
        EndpointUrl url = new EndpointUrl("wss://src.example:8443/changes/v0/stream?apiKey=k%20y");
        assertEquals("wss://src.example:8443/changes/v0/stream?apiKey=k+y&appID=zero&shardNum=2"
                + "&publications=pub_a&publications=pub+b", url.streamUri("zero", 2, List.of("pub_a", "pub b"), null, "")
                .toString());
    }

    @Test
    void resumingAddsLastWatermarkAndReplicaVersion() {
        EndpointUrl url = new EndpointUrl("ws://h/changes/v0/stream");
        assertEquals("ws://h/changes/v0/stream?appID=a&shardNum=0&lastWatermark=0c&replicaVersion=0a",
                url.streamUri("a", 0, List.of(), "0c", "0a").toString());
        assertThrows(IllegalStateException.class, () -> url.streamUri("a", 0, List.of(), "0c", ""));
    }

    @Test
    void httpMapsToWsAndOwnParametersReplaceTheUrls() {
        EndpointUrl url = new EndpointUrl("http://h:1/p?appID=old&x=1&shardNum=9&appID=older");
        assertEquals("ws://h:1/p?appID=new&x=1&shardNum=3", url.streamUri("new", 3, List.of(), null, null).toString());
        assertTrue(new EndpointUrl("https://h/p").streamUri("a", 0, List.of(), null, null).toString()
                .startsWith("wss://h/p?"));
    }

    @Test
    void displayNameHidesTheQueryAndUserInfo() {
        assertEquals("wss://h:9/changes/v0/stream",
                new EndpointUrl("wss://user:pw@h:9/changes/v0/stream?apiKey=secret").displayName());
    }

    @Test
    void badUrlsGetClearErrors() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EndpointUrl("")).getMessage()
                .contains("but it is empty"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EndpointUrl("postgresql://h/db"))
                .getMessage().contains("got scheme 'postgresql'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EndpointUrl("ws:///x")).getMessage()
                .contains("has no host"));
        assertThrows(IllegalArgumentException.class, () -> new EndpointUrl("ws://h/ x"));
    }
}
