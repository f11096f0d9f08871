package org.zrm.replicator.internal;

import org.zrm.protocol.ChangeStreamData;
import org.zrm.protocol.json.ProtocolCodec;
import org.zrm.protocol.subscriber.Downstream;

/** Change-stream message texts in the shapes the Postgres change source sends. */
final class Msgs {

    static final ProtocolCodec CODEC = new ProtocolCodec();

    static final String ISSUE = "{\"tag\":\"relation\",\"relationOid\":16385,\"schema\":\"public\",\"name\":\"issue\","
            + "\"rowKey\":{\"columns\":[\"id\"],\"type\":\"default\"},\"keyColumns\":[\"id\"],\"replicaIdentity\":\"default\"}";

    private Msgs() {}

    static String begin(String watermark) {
        return "[\"begin\",{\"tag\":\"begin\",\"commitLsn\":\"0/1\",\"commitTime\":1719830400000000,\"xid\":7,\"json\":\"s\"},"
                + "{\"commitWatermark\":\"" + watermark + "\"}]";
    }

    static String commit(String watermark) {
        return "[\"commit\",{\"tag\":\"commit\",\"flags\":0},{\"watermark\":\"" + watermark + "\"}]";
    }

    static String rollback() {
        return "[\"rollback\",{\"tag\":\"rollback\"}]";
    }

    static String status() {
        return "[\"status\",{\"tag\":\"status\"}]";
    }

    static String error(int type, String message) {
        return "[\"error\",{\"type\":" + type + ",\"message\":\"" + message + "\"}]";
    }

    static String data(String change) {
        return "[\"data\"," + change + "]";
    }

    static String insertIssue(String id, String title) {
        return data("{\"tag\":\"insert\",\"relation\":" + ISSUE + ",\"new\":{\"id\":\"" + id + "\",\"title\":\"" + title
                + "\"}}");
    }

    static String deleteIssue(String id) {
        return data("{\"tag\":\"delete\",\"relation\":" + ISSUE + ",\"key\":{\"id\":\"" + id + "\"}}");
    }

    /** Decodes a message text into the processor's input. */
    static ChangeStreamData decode(String json) {
        return ((Downstream.ChangeMessage) CODEC.decodeDownstream(json)).data();
    }
}
