package org.zrm.changesource.pg.internal.setup;

import java.util.regex.Pattern;

/**
 * An app id and shard number, and every upstream name derived from them (spec §4.1). These
 * strings are shared with zero-cache and must not change.
 */
public record ShardId(String appId, int shardNum) {

    private static final Pattern APP_ID = Pattern.compile("^[a-z0-9_]+$");

    /**
     * @throws IllegalArgumentException if the app id is not {@code [a-z0-9_]+} or the shard number
     *     is negative
     */
    public ShardId {
        if (appId == null || !APP_ID.matcher(appId).matches()) {
            throw new IllegalArgumentException(
                    "The App ID may only consist of lower-case letters, numbers, and the underscore character");
        }
        if (shardNum < 0) {
            throw new IllegalArgumentException("shard.num must be >= 0, got " + shardNum);
        }
    }

    /** The shard ("upstream") schema, e.g. {@code zero_0}. */
    public String schema() {
        return appId + "_" + shardNum;
    }

    public String metadataPublication() {
        return "_" + appId + "_metadata_" + shardNum;
    }

    /** The publication created when {@code app.publications} is empty. */
    public String defaultPublication() {
        return "_" + appId + "_public_" + shardNum;
    }

    /** Prefix of internal publications; user publications may not start with {@code _}. */
    public String internalPublicationPrefix() {
        return "_" + appId + "_";
    }

    /** Prefix of the slot pool names {@code {app}_{n}_a, …}. */
    public String slotPrefix() {
        return appId + "_" + shardNum + "_";
    }

    /** The prefix as an escaped {@code LIKE} pattern matching every pool slot. */
    public String slotLikeExpression() {
        return (slotPrefix() + "%").replace("_", "\\_");
    }

    /** The pre-pool slot name {@code {app}_{n}}. */
    public String legacySlot() {
        return appId + "_" + shardNum;
    }

    public String ddlStartTrigger() {
        return appId + "_ddl_start_" + shardNum;
    }

    public String ddlEndTrigger() {
        return appId + "_ddl_end_" + shardNum;
    }

    /** Logical message prefix of DDL events. */
    public String ddlMessagePrefix() {
        return appId + "/" + shardNum + "/ddl";
    }

    /** Legacy logical message prefix of DDL events. */
    public String legacyDdlMessagePrefix() {
        return appId + "/" + shardNum;
    }

    /** Logical message prefix of replication lag reports. */
    public String lagReportMessagePrefix() {
        return appId + "/" + shardNum + "/lag-report/v1";
    }

    /** Argument of {@code hashtext(…)} for the shard-migration advisory lock. */
    public String migrationLockName() {
        return "migrate-schema:" + schema();
    }

    /** Argument of {@code hashtext(…)} for the slot-management advisory lock. */
    public String slotManagementLockName() {
        return "replication-slot-management:" + schema();
    }
}
