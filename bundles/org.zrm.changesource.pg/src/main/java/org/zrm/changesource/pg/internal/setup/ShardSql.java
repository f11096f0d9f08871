package org.zrm.changesource.pg.internal.setup;

import java.util.List;
import java.util.stream.Collectors;

/**
 * SQL text of the upstream shard objects. Everything here must stay textually equivalent to
 * zero-cache 1.8 ({@code shard.ts}, {@code published.ts}, {@code ddl.ts}): both implementations
 * run {@code CREATE OR REPLACE} on the same database, the DDL event triggers' JSON payloads are
 * compared textually, and the published-schema query is embedded in {@code schema_specs()}.
 * Comments inside the SQL strings are part of that text.
 */
public final class ShardSql {

    /** The command tags that fire the DDL start/end event triggers (end also fires on COMMENT). */
    public static final List<String> TAGS = List.of("CREATE TABLE", "ALTER TABLE", "CREATE INDEX", "DROP TABLE",
            "DROP INDEX", "ALTER PUBLICATION", "ALTER SCHEMA");
    private static final List<String> TAGS_AND_COMMENT = List.of("CREATE TABLE", "ALTER TABLE", "CREATE INDEX",
            "DROP TABLE", "DROP INDEX", "ALTER PUBLICATION", "ALTER SCHEMA", "COMMENT");

    /** Protocol version of the DDL event messages. */
    public static final int DDL_PROTOCOL_VERSION = 1;

    /** {@code pg_advisory_xact_lock} key serialising DDL statements (0x3c6b8468f1bac0b0). */
    public static final long DDL_SERIALIZATION_LOCK = 0x3c6b8468f1bac0b0L;

    private ShardSql() {}

    /** {@code "name"} with embedded quotes doubled. */
    public static String quoteId(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    /** {@code 'value'} with embedded quotes doubled (names here never contain backslashes). */
    public static String quoteLiteral(String value) {
        return "'" + value.replace("'", "''") + "'";
    }

    /** A comma-separated literal list as pg-format renders arrays: {@code 'a','b'}. */
    public static String literalList(List<String> values) {
        return values.stream().map(ShardSql::quoteLiteral).collect(Collectors.joining(","));
    }

    /**
     * The published-schema query (one row, one JSON column {@code publishedSchema} with
     * {@code tables} and {@code indexes}).
     */
    public static String publishedSchemaQuery(List<String> publications) {
        String pubList = literalList(publications);
        return "\n"
                + "WITH published_columns AS (SELECT \n"
                + "  pc.oid::int8 AS \"oid\",\n"
                + "  nspname AS \"schema\",\n"
                + "  pc.relnamespace::int8 AS \"schemaOID\" ,\n"
                + "  pc.relname AS \"name\", \n"
                + "  pc.relreplident AS \"replicaIdentity\",\n"
                + "  attnum AS \"pos\", \n"
                + "  attname AS \"col\", \n"
                + "  pt.typname AS \"type\", \n"
                + "  atttypid::int8 AS \"typeOID\", \n"
                + "  pt.typtype,\n"
                + "  elem_pt.typtype AS \"elemTyptype\",\n"
                + "  NULLIF(atttypmod, -1) AS \"maxLen\", \n"
                + "  attndims \"arrayDims\", \n"
                + "  attnotnull AS \"notNull\",\n"
                + "  pg_get_expr(pd.adbin, pd.adrelid) as \"dflt\",\n"
                + "  NULLIF(ARRAY_POSITION(conkey, attnum), -1) AS \"keyPos\", \n"
                + "  pb.rowfilter as \"rowFilter\",\n"
                + "  pb.pubname as \"publication\"\n"
                + "FROM pg_attribute\n"
                + "JOIN pg_class pc ON pc.oid = attrelid\n"
                + "JOIN pg_namespace pns ON pns.oid = relnamespace\n"
                + "JOIN pg_type pt ON atttypid = pt.oid\n"
                + "LEFT JOIN pg_type elem_pt ON elem_pt.oid = pt.typelem\n"
                + "JOIN pg_publication_tables as pb ON \n"
                + "  pb.schemaname = nspname AND \n"
                + "  pb.tablename = pc.relname AND\n"
                + "  attname = ANY(pb.attnames)\n"
                + "LEFT JOIN pg_constraint pk ON pk.contype = 'p' AND pk.connamespace = relnamespace AND pk.conrelid = attrelid\n"
                + "LEFT JOIN pg_attrdef pd ON pd.adrelid = attrelid AND pd.adnum = attnum\n"
                + "WHERE pb.pubname IN (" + pubList + ") AND \n"
                + "      (current_setting('server_version_num')::int >= 160000 OR attgenerated = '')\n"
                + "ORDER BY nspname, pc.relname),\n"
                + "\n"
                + "tables AS (SELECT json_build_object(\n"
                + "  'oid', \"oid\",\n"
                + "  'schema', \"schema\", \n"
                + "  'schemaOID', \"schemaOID\",\n"
                + "  'name', \"name\", \n"
                + "  'replicaIdentity', \"replicaIdentity\",\n"
                + "  'columns', json_object_agg(\n"
                + "    DISTINCT\n"
                + "    col,\n"
                + "    jsonb_build_object(\n"
                + "      'pos', \"pos\",\n"
                + "      'dataType', CASE WHEN \"arrayDims\" = 0 \n"
                + "                       THEN \"type\" \n"
                + "                       ELSE substring(\"type\" from 2) || repeat('[]', \"arrayDims\") END,\n"
                + "      'pgTypeClass', \"typtype\",\n"
                + "      'elemPgTypeClass', \"elemTyptype\",\n"
                + "      'typeOID', \"typeOID\",\n"
                + "      -- https://stackoverflow.com/a/52376230\n"
                + "      'characterMaximumLength', CASE WHEN \"typeOID\" = 1043 OR \"typeOID\" = 1042 \n"
                + "                                     THEN \"maxLen\" - 4 \n"
                + "                                     ELSE \"maxLen\" END,\n"
                + "      'notNull', \"notNull\",\n"
                + "      'dflt', \"dflt\"\n"
                + "    )\n"
                + "  ),\n"
                + "  'primaryKey', ARRAY( SELECT json_object_keys(\n"
                + "    json_strip_nulls(\n"
                + "      json_object_agg(\n"
                + "        DISTINCT \"col\", \"keyPos\" ORDER BY \"keyPos\"\n"
                + "      )\n"
                + "    )\n"
                + "  )),\n"
                + "  'publications', json_object_agg(\n"
                + "    DISTINCT \n"
                + "    \"publication\", \n"
                + "    jsonb_build_object('rowFilter', \"rowFilter\")\n"
                + "  )\n"
                + ") AS \"table\" FROM published_columns \n"
                + "  GROUP BY \"schema\", \"schemaOID\", \"name\", \"oid\", \"replicaIdentity\"),\n"
                + "  \n"
                + "  indexed_columns AS (SELECT\n"
                + "      pg_indexes.schemaname as \"schema\",\n"
                + "      pg_indexes.tablename as \"tableName\",\n"
                + "      pg_indexes.indexname as \"name\",\n"
                + "      index_column.name as \"col\",\n"
                + "      CASE WHEN pg_index.indoption[index_column.pos-1] & 1 = 1 THEN 'DESC' ELSE 'ASC' END as \"dir\",\n"
                + "      pg_index.indisunique as \"unique\",\n"
                + "      pg_index.indisprimary as \"isPrimaryKey\",\n"
                + "      pg_index.indisreplident as \"isReplicaIdentity\",\n"
                + "      pg_index.indimmediate as \"isImmediate\"\n"
                + "    FROM pg_indexes\n"
                + "    JOIN pg_namespace ON pg_indexes.schemaname = pg_namespace.nspname\n"
                + "    JOIN pg_class pc ON\n"
                + "      pc.relname = pg_indexes.indexname\n"
                + "      AND pc.relnamespace = pg_namespace.oid\n"
                + "    JOIN pg_publication_tables as pb ON \n"
                + "      pb.schemaname = pg_indexes.schemaname AND \n"
                + "      pb.tablename = pg_indexes.tablename\n"
                + "    JOIN pg_index ON pg_index.indexrelid = pc.oid\n"
                + "    JOIN LATERAL (\n"
                + "      SELECT array_agg(attname) as attnames, array_agg(attgenerated != '') as generated FROM pg_attribute\n"
                + "        WHERE attrelid = pg_index.indrelid\n"
                + "          AND attnum = ANY( (pg_index.indkey::smallint[] )[:pg_index.indnkeyatts - 1] )\n"
                + "    ) as indexed ON true\n"
                + "    JOIN LATERAL (\n"
                + "      SELECT pg_attribute.attname as name, col.index_pos as pos\n"
                + "        FROM UNNEST( (pg_index.indkey::smallint[])[:pg_index.indnkeyatts - 1] ) \n"
                + "          WITH ORDINALITY as col(table_pos, index_pos)\n"
                + "        JOIN pg_attribute ON attrelid = pg_index.indrelid AND attnum = col.table_pos\n"
                + "    ) AS index_column ON true\n"
                + "    LEFT JOIN pg_constraint ON pg_constraint.conindid = pc.oid\n"
                + "    WHERE pb.pubname IN (" + pubList + ")\n"
                + "      AND pg_index.indexprs IS NULL\n"
                + "      AND pg_index.indpred IS NULL\n"
                + "      AND (pg_constraint.contype IS NULL OR pg_constraint.contype IN ('p', 'u'))\n"
                + "      AND indexed.attnames <@ pb.attnames\n"
                + "      AND (current_setting('server_version_num')::int >= 160000 OR false = ALL(indexed.generated))\n"
                + "    ORDER BY\n"
                + "      pg_indexes.schemaname,\n"
                + "      pg_indexes.tablename,\n"
                + "      pg_indexes.indexname,\n"
                + "      index_column.pos ASC),\n"
                + "  \n"
                + "    indexes AS (SELECT json_build_object(\n"
                + "      'schema', \"schema\",\n"
                + "      'tableName', \"tableName\",\n"
                + "      'name', \"name\",\n"
                + "      'unique', \"unique\",\n"
                + "      'isPrimaryKey', \"isPrimaryKey\",\n"
                + "      'isReplicaIdentity', \"isReplicaIdentity\",\n"
                + "      'isImmediate', \"isImmediate\",\n"
                + "      'columns', json_object_agg(\"col\", \"dir\")\n"
                + "    ) AS index FROM indexed_columns \n"
                + "      GROUP BY \"schema\", \"tableName\", \"name\", \"unique\", \n"
                + "         \"isPrimaryKey\", \"isReplicaIdentity\", \"isImmediate\")\n"
                + "\n"
                + "    SELECT json_build_object(\n"
                + "      'tables', COALESCE((SELECT json_agg(\"table\") FROM tables), '[]'::json),\n"
                + "      'indexes', COALESCE((SELECT json_agg(\"index\") FROM indexes), '[]'::json)\n"
                + "    ) as \"publishedSchema\"\n"
                + "  ";
    }

    /** App-global objects (idempotent; shared by all shards of an app). */
    public static String globalSetup(String appId) {
        String app = quoteId(appId);
        return "\n"
                + "  CREATE SCHEMA IF NOT EXISTS " + app + ";\n"
                + "\n"
                + "  CREATE TABLE IF NOT EXISTS " + app + ".permissions (\n"
                + "    \"permissions\" JSONB,\n"
                + "    \"hash\"        TEXT,\n"
                + "\n"
                + "    -- Ensure that there is only a single row in the table.\n"
                + "    -- Application code can be agnostic to this column, and\n"
                + "    -- simply invoke UPDATE statements on the version columns.\n"
                + "    \"lock\" BOOL PRIMARY KEY DEFAULT true CHECK (lock)\n"
                + "  );\n"
                + "\n"
                + "  CREATE OR REPLACE FUNCTION " + app + ".set_permissions_hash()\n"
                + "  RETURNS TRIGGER AS $$\n"
                + "  BEGIN\n"
                + "      NEW.hash = md5(NEW.permissions::text);\n"
                + "      RETURN NEW;\n"
                + "  END;\n"
                + "  $$ LANGUAGE plpgsql;\n"
                + "\n"
                + "  CREATE OR REPLACE TRIGGER on_set_permissions \n"
                + "    BEFORE INSERT OR UPDATE ON " + app + ".permissions\n"
                + "    FOR EACH ROW\n"
                + "    EXECUTE FUNCTION " + app + ".set_permissions_hash();\n"
                + "\n"
                + "  INSERT INTO " + app + ".permissions (permissions) VALUES (NULL) ON CONFLICT DO NOTHING;\n"
                + "";
    }

    static String clientsTable(String schema) {
        return "\n"
                + "  CREATE TABLE " + schema + ".\"clients\" (\n"
                + "    \"clientGroupID\"  TEXT NOT NULL,\n"
                + "    \"clientID\"       TEXT NOT NULL,\n"
                + "    \"lastMutationID\" BIGINT NOT NULL,\n"
                + "    \"userID\"         TEXT,\n"
                + "    PRIMARY KEY(\"clientGroupID\", \"clientID\")\n"
                + "  );";
    }

    static String mutationsTable(String schema) {
        return "\n"
                + "  CREATE TABLE " + schema + ".\"mutations\" (\n"
                + "    \"clientGroupID\"  TEXT NOT NULL,\n"
                + "    \"clientID\"       TEXT NOT NULL,\n"
                + "    \"mutationID\"     BIGINT NOT NULL,\n"
                + "    \"result\"         JSON NOT NULL,\n"
                + "    PRIMARY KEY(\"clientGroupID\", \"clientID\", \"mutationID\")\n"
                + "  );";
    }

    /**
     * The shard schema, its tables, the metadata publication and the shardConfig row.
     *
     * @param pubs all publications of the shard including the metadata publication
     */
    public static String shardSetup(ShardId id, List<String> pubs) {
        String app = quoteId(id.appId());
        String shard = quoteId(id.schema());
        String metadataPublication = id.metadataPublication();
        pubs = pubs.stream().sorted().toList();
        return "\n"
                + "  CREATE SCHEMA IF NOT EXISTS " + shard + ";\n"
                + "\n"
                + "  " + clientsTable(shard) + "\n"
                + "  " + mutationsTable(shard) + "\n"
                + "\n"
                + "  DROP PUBLICATION IF EXISTS " + quoteId(metadataPublication) + ";\n"
                + "  CREATE PUBLICATION " + quoteId(metadataPublication) + "\n"
                + "    FOR TABLE " + app + ".\"permissions\", TABLE " + shard + ".\"clients\", " + shard + ".\"mutations\";\n"
                + "\n"
                + "  CREATE TABLE " + shard + ".\"" + "shardConfig" + "\" (\n"
                + "    \"publications\"  TEXT[] NOT NULL,\n"
                + "    \"ddlDetection\"  BOOL NOT NULL,\n"
                + "\n"
                + "    -- Ensure that there is only a single row in the table.\n"
                + "    \"lock\" BOOL PRIMARY KEY DEFAULT true CHECK (lock)\n"
                + "  );\n"
                + "\n"
                + "  INSERT INTO " + shard + ".\"" + "shardConfig" + "\" (\n"
                + "      \"publications\",\n"
                + "      \"ddlDetection\" \n"
                + "    ) VALUES (\n"
                + "      ARRAY[" + literalList(pubs) + "], \n"
                + "      false  -- set in SAVEPOINT with triggerSetup() statements\n"
                + "    );\n"
                + "\n"
                + "  CREATE TABLE " + shard + ".replicas (\n"
                + "    -- The DEFAULT exists purely for backwards compatibility support.\n"
                + "    -- New code always specifies a value based on Date.now().\n"
                + "    \"id\"                 TEXT PRIMARY KEY DEFAULT replace(gen_random_uuid()::text, '-', ''),\n"
                + "    \"rank\"               BIGSERIAL,\n"
                + "    \"slot\"               TEXT NOT NULL,\n"
                + "    \"version\"            TEXT NOT NULL,\n"
                + "    \"initialSchema\"      JSON,  -- set after initial sync\n"
                + "    \"initialSyncContext\" JSON,\n"
                + "    \"subscriberContext\"  JSON\n"
                + "  );\n"
                + "  ";
    }

    /** Drops the shard's publications and schema (which cascades to its functions and triggers). */
    public static String dropShard(ShardId id) {
        return "\n    DROP PUBLICATION IF EXISTS " + quoteId(id.defaultPublication()) + ";\n"
                + "    DROP PUBLICATION IF EXISTS " + quoteId(id.metadataPublication()) + ";\n"
                + "    DROP SCHEMA IF EXISTS " + quoteId(id.schema()) + " CASCADE;\n  ";
    }

    /** The event-trigger functions, {@code publishedSchema} table and {@code schema_specs()}. */
    public static String eventFunctions(ShardId id, List<String> publications) {
        String schema = quoteId(id.schema());
        String appId = id.appId();
        String shardNum = Integer.toString(id.shardNum());
        return "\n"
                + "CREATE SCHEMA IF NOT EXISTS " + schema + ";\n"
                + "\n"
                + "CREATE OR REPLACE FUNCTION " + schema + ".get_trigger_context()\n"
                + "RETURNS record AS $$\n"
                + "DECLARE\n"
                + "  result record;\n"
                + "BEGIN\n"
                + "  SELECT COALESCE(current_query(), 'current_query() returned NULL') AS \"query\" into result;\n"
                + "  RETURN result;\n"
                + "END\n"
                + "$$ LANGUAGE plpgsql;\n"
                + "\n"
                + "\n"
                + "CREATE OR REPLACE FUNCTION " + schema + ".notice_ignore(reason TEXT, tag TEXT, target record)\n"
                + "RETURNS void AS $$\n"
                + "BEGIN\n"
                + "  RAISE NOTICE '" + appId + "_" + shardNum + " ignoring % % %', reason, tag, \n"
                + "    COALESCE(row_to_json(target)::text, '');\n"
                + "END\n"
                + "$$ LANGUAGE plpgsql;\n"
                + "\n"
                + "\n"
                + "-- Note: DROP and CREATE to upgrade from v20 to v21 because the\n"
                + "-- return type has changed. This can be simplified to CREATE OR REPLACE\n"
                + "-- once 1.5.0 is rollback safe.\n"
                + "DROP FUNCTION IF EXISTS " + schema + ".schema_specs();\n"
                + "CREATE FUNCTION " + schema + ".schema_specs()\n"
                + "RETURNS JSON \n"
                + "STABLE\n"
                + "AS $$\n"
                + "  " + publishedSchemaQuery(publications) + "\n"
                + "$$ LANGUAGE sql;\n"
                + "\n"
                + "\n"
                + "-- Stores the most recent published schema\n"
                + "CREATE TABLE IF NOT EXISTS " + schema + ".\"publishedSchema\" (\n"
                + "  current JSON,\n"
                + "  exists BOOL PRIMARY KEY DEFAULT true CHECK (exists)\n"
                + ");\n"
                + "\n"
                + "INSERT INTO " + schema + ".\"publishedSchema\" (current) VALUES (" + schema + ".schema_specs())\n"
                + "  ON CONFLICT (exists) DO \n"
                + "  UPDATE SET current = excluded.current;\n"
                + "\n"
                + "\n"
                + "CREATE OR REPLACE FUNCTION " + schema + ".update_schemas(event_type text, tag text, target record)\n"
                + "RETURNS void AS $$\n"
                + "DECLARE\n"
                + "  prev_schema_specs JSON;\n"
                + "  schema_specs JSON;\n"
                + "  message TEXT;\n"
                + "BEGIN\n"
                + "  SELECT current FROM " + schema + ".\"publishedSchema\" INTO prev_schema_specs;\n"
                + "  SELECT " + schema + ".schema_specs() INTO schema_specs;\n"
                + "  \n"
                + "  IF prev_schema_specs::text != schema_specs::text THEN\n"
                + "    UPDATE " + schema + ".\"publishedSchema\" SET current = schema_specs;\n"
                + "  ELSIF event_type = 'ddlStart' THEN\n"
                + "    -- ddlStart events are always be emitted to allow the zero-cache\n"
                + "    -- to track the context of the current command tag in the face of\n"
                + "    -- nested event triggers (e.g. start->start->end->end).\n"
                + "    prev_schema_specs = NULL;\n"
                + "  ELSIF event_type = 'ddlUpdate' THEN\n"
                + "    -- TODO: fold 'schemaSnapshot' into this condition too (i.e. make it \"ELSE\")\n"
                + "    -- when 1.5.0 is rollback safe. Until then, noop schemaSnapshots are sent\n"
                + "    -- for compatibility with 1.0.0 ~ 1.4.0.\n"
                + "    PERFORM " + schema + ".notice_ignore('noop', tag, target);\n"
                + "    RETURN;\n"
                + "  END IF;\n"
                + "\n"
                + "  SELECT json_build_object(\n"
                + "    'type', event_type,\n"
                + "    'version', " + "1" + ",\n"
                + "    'previousSchema', prev_schema_specs,\n"
                + "    'schema', schema_specs,\n"
                + "    'event', json_build_object('tag', tag),\n"
                + "    'context', " + schema + ".get_trigger_context()\n"
                + "  ) INTO message;\n"
                + "\n"
                + "  PERFORM pg_logical_emit_message(true, '" + appId + "/" + shardNum + "/ddl', message);\n"
                + "\n"
                + "  RAISE NOTICE 'Emitted " + appId + "_" + shardNum + " % for % %', event_type, tag, \n"
                + "    COALESCE(row_to_json(target)::text, '');\n"
                + "END\n"
                + "$$ LANGUAGE plpgsql;\n"
                + "\n"
                + "\n"
                + "-- Hook/workaround to manually trigger replication of schema changes on DBs \n"
                + "-- that do not support/allow event triggers.\n"
                + "CREATE OR REPLACE FUNCTION " + schema + ".update_schemas()\n"
                + "RETURNS void AS $$\n"
                + "BEGIN\n"
                + "  PERFORM " + schema + ".update_schemas('schemaSnapshot', 'MANUAL', NULL);\n"
                + "END\n"
                + "$$ LANGUAGE plpgsql;\n"
                + "\n"
                + "\n"
                + "CREATE OR REPLACE FUNCTION " + schema + ".emit_ddl_start()\n"
                + "RETURNS event_trigger AS $$\n"
                + "DECLARE\n"
                + "  schema_specs JSON;\n"
                + "  message TEXT;\n"
                + "BEGIN\n"
                + "  -- serialize DDL statements to compute correct schema change diffs\n"
                + "  PERFORM pg_advisory_xact_lock(" + "4353719051050729648" + ");\n"
                + "  PERFORM " + schema + ".update_schemas('ddlStart', TG_TAG, NULL);\n"
                + "END\n"
                + "$$ LANGUAGE plpgsql;\n"
                + "\n"
                + "\n"
                + "CREATE OR REPLACE FUNCTION " + schema + ".emit_ddl_end()\n"
                + "RETURNS event_trigger AS $$\n"
                + "DECLARE\n"
                + "  publications TEXT[];\n"
                + "  target RECORD;\n"
                + "  relevant RECORD;\n"
                + "  schema_specs JSON;\n"
                + "  message TEXT;\n"
                + "  event TEXT;\n"
                + "BEGIN\n"
                + "  publications := ARRAY[" + literalList(publications) + "];\n"
                + "\n"
                + "  SELECT objid, object_type, object_identity \n"
                + "    FROM pg_event_trigger_ddl_commands() \n"
                + "    LIMIT 1 INTO target;\n"
                + "\n"
                + "  -- Filter DDL updates that are not relevant to the shard (i.e. publications) when possible.\n"
                + "  SELECT true INTO relevant;\n"
                + "\n"
                + "  -- Note: ALTER TABLE statements may *remove* the table from the set of published\n"
                + "  --       tables, and there is no way to determine if the table \"used to be\" in the\n"
                + "  --       set. Thus, all ALTER TABLE statements must produce a ddl update, similar to\n"
                + "  --       any DROP * statement.\n"
                + "  IF (target.object_type = 'table' AND TG_TAG != 'ALTER TABLE') \n"
                + "     OR target.object_type = 'table column' THEN\n"
                + "    SELECT ns.nspname AS \"schema\", c.relname AS \"name\" FROM pg_class AS c\n"
                + "      JOIN pg_namespace AS ns ON c.relnamespace = ns.oid\n"
                + "      JOIN pg_publication_tables AS pb ON pb.schemaname = ns.nspname AND pb.tablename = c.relname\n"
                + "      WHERE c.oid = target.objid AND pb.pubname = ANY (publications)\n"
                + "      INTO relevant;\n"
                + "\n"
                + "  ELSIF target.object_type = 'index' THEN\n"
                + "    SELECT ns.nspname AS \"schema\", c.relname AS \"name\" FROM pg_class AS c\n"
                + "      JOIN pg_namespace AS ns ON c.relnamespace = ns.oid\n"
                + "      JOIN pg_indexes as ind ON ind.schemaname = ns.nspname AND ind.indexname = c.relname\n"
                + "      JOIN pg_publication_tables AS pb ON pb.schemaname = ns.nspname AND pb.tablename = ind.tablename\n"
                + "      WHERE c.oid = target.objid AND pb.pubname = ANY (publications)\n"
                + "      INTO relevant;\n"
                + "\n"
                + "  ELSIF target.object_type = 'publication relation' THEN\n"
                + "    SELECT pb.pubname FROM pg_publication_rel AS rel\n"
                + "      JOIN pg_publication AS pb ON pb.oid = rel.prpubid\n"
                + "      WHERE rel.oid = target.objid AND pb.pubname = ANY (publications) \n"
                + "      INTO relevant;\n"
                + "\n"
                + "  ELSIF target.object_type = 'publication namespace' THEN\n"
                + "    SELECT pb.pubname FROM pg_publication_namespace AS ns\n"
                + "      JOIN pg_publication AS pb ON pb.oid = ns.pnpubid\n"
                + "      WHERE ns.oid = target.objid AND pb.pubname = ANY (publications) \n"
                + "      INTO relevant;\n"
                + "\n"
                + "  ELSIF target.object_type = 'schema' THEN\n"
                + "    SELECT ns.nspname AS \"schema\", c.relname AS \"name\" FROM pg_class AS c\n"
                + "      JOIN pg_namespace AS ns ON c.relnamespace = ns.oid\n"
                + "      JOIN pg_publication_tables AS pb ON pb.schemaname = ns.nspname AND pb.tablename = c.relname\n"
                + "      WHERE ns.oid = target.objid AND pb.pubname = ANY (publications)\n"
                + "      INTO relevant;\n"
                + "\n"
                + "  ELSIF target.object_type = 'publication' THEN\n"
                + "    SELECT 1 WHERE target.object_identity = ANY (publications)\n"
                + "      INTO relevant;\n"
                + "\n"
                + "  -- no-op CREATE IF NOT EXIST statements\n"
                + "  ELSIF TG_TAG LIKE 'CREATE %' AND target.object_type IS NULL THEN\n"
                + "    relevant := NULL;\n"
                + "  END IF;\n"
                + "\n"
                + "  IF relevant IS NULL THEN\n"
                + "    PERFORM " + schema + ".notice_ignore('irrelevant', TG_TAG, target);\n"
                + "    RETURN;\n"
                + "  END IF;\n"
                + "\n"
                + "  IF TG_TAG = 'COMMENT' THEN\n"
                + "    -- Only make schemaSnapshots for COMMENT ON PUBLICATION\n"
                + "    IF target.object_type != 'publication' THEN\n"
                + "      PERFORM " + schema + ".notice_ignore('irrelevant', TG_TAG, target);\n"
                + "      RETURN;\n"
                + "    END IF;\n"
                + "    PERFORM " + schema + ".update_schemas('schemaSnapshot', TG_TAG, target);\n"
                + "  ELSE\n"
                + "    PERFORM " + schema + ".update_schemas('ddlUpdate', TG_TAG, target);\n"
                + "  END IF;\n"
                + "\n"
                + "END\n"
                + "$$ LANGUAGE plpgsql;\n"
                + "";
    }

    static String dropEventTriggers(ShardId id) {
        String ddlStart = quoteId(id.ddlStartTrigger());
        String ddlEnd = quoteId(id.ddlEndTrigger());
        return "\n"
                + "    DROP EVENT TRIGGER IF EXISTS " + ddlStart + ";\n"
                + "    DROP EVENT TRIGGER IF EXISTS " + ddlEnd + ";\n"
                + "  ";
    }

    /** Drops and re-creates the two event triggers and drops legacy functions. */
    public static String eventTriggers(ShardId id, List<String> publications) {
        if (publications.isEmpty()) {
            throw new IllegalArgumentException("shard publications must be non-empty");
        }
        String schema = quoteId(id.schema());
        String ddlStart = quoteId(id.ddlStartTrigger());
        String ddlEnd = quoteId(id.ddlEndTrigger());
        StringBuilder sb = new StringBuilder(dropEventTriggers(id));
        sb.append(
                "\n"
                + "CREATE EVENT TRIGGER " + ddlStart + "\n"
                + "  ON ddl_command_start\n"
                + "  WHEN TAG IN (" + literalList(TAGS) + ")\n"
                + "  EXECUTE PROCEDURE " + schema + ".emit_ddl_start();\n"
                + "\n"
                + "CREATE EVENT TRIGGER " + ddlEnd + "\n"
                + "  ON ddl_command_end\n"
                + "  WHEN TAG IN (" + literalList(TAGS_AND_COMMENT) + ")\n"
                + "  EXECUTE PROCEDURE " + schema + ".emit_ddl_end();\n"
                + "");
        sb.append("DROP FUNCTION IF EXISTS ").append(schema).append(".emit_ddl_end(text) CASCADE;");
        sb.append("DROP FUNCTION IF EXISTS ").append(schema).append(".notice_ignore(text, record);");
        for (String tag : TAGS_AND_COMMENT) {
            // upstream replaces only the first space (String.replace with a string pattern)
            String tagId = tag.toLowerCase(java.util.Locale.ROOT).replaceFirst(" ", "_");
            sb.append("DROP FUNCTION IF EXISTS ").append(schema).append(".emit_").append(tagId).append("() CASCADE;");
        }
        return sb.toString();
    }
}
