package org.zrm.changesource.endpoint.internal;

/** Messages as the change streamer encodes them (v6 subscriber JSON). */
final class Wire {
    private Wire() {
    }

    static String begin(String w) {
        return "[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"" + w + "\"}]";
    }

    static String insert(long id) {
        return "[\"data\",{\"tag\":\"insert\",\"relation\":{\"schema\":\"public\",\"name\":\"t\",\"rowKey\":"
                + "{\"columns\":[\"id\"]}},\"new\":{\"id\":" + id + "}}]";
    }

    static String commit(String w) {
        return "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"" + w + "\"}]";
    }

    static String ack(String w) {
        return "[\"status\",{\"tag\":\"commit\"},{\"watermark\":\"" + w + "\"}]";
    }

    static String status() {
        return "[\"status\",{\"tag\":\"status\"}]";
    }
}
