package org.zrm.example.jsonl;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration of PID {@value JsonlChangeSourceComponent#PID}, e.g. {@code conf/org.zrm.example.jsonl.cfg}:
 *
 * <pre>
 * directory = /srv/changes
 * app.id = $[env:ZERO_APP_ID;default=zero]
 * shard.num = $[env:ZERO_SHARD_NUM;default=0]
 * replica.file = $[env:ZERO_REPLICA_FILE;default=zero.db]
 * </pre>
 *
 * <p>{@code app.id}, {@code shard.num} and {@code replica.file} must be the values the rest of ZRM
 * uses (its {@code org.zrm.identity.cfg}): the replica is the one file the replicator keeps.
 */
@ObjectClassDefinition(name = "ZRM example: JSON-lines change source",
        description = "A change source (zrm.changesource.type=jsonl) reading a directory of JSON-lines change files.")
@interface JsonlConfig {

    @AttributeDefinition(description = "The change directory: schema.json and changes-NNNNNN.jsonl.")
    String directory();

    @AttributeDefinition(name = "app.id", description = "App id (ZERO_APP_ID), as in org.zrm.identity.")
    String app_id() default "zero";

    @AttributeDefinition(name = "shard.num", min = "0", description = "Shard number (ZERO_SHARD_NUM).")
    int shard_num() default 0;

    @AttributeDefinition(name = "replica.file", description = "The replica file (ZERO_REPLICA_FILE).")
    String replica_file() default "zero.db";

    @AttributeDefinition(min = "1", description = "Longest change line accepted, in bytes; a longer line is an error.")
    int maxLineBytes() default 16 << 20;

    @AttributeDefinition(min = "1", description = "Bound of one wait for the directory watch before the files are"
            + " read again (covers missed watch events).")
    long recheckIntervalMs() default 1_000;
}
