package org.zrm.changesource.pg.internal.backfill;

import org.zrm.protocol.BackfillRequest;

/**
 * The table read in the snapshot no longer matches the request's metadata (renamed or dropped,
 * a different schema or table oid, a changed row key, a column renamed or dropped). The request
 * becomes servable again once the schema change that caused this reaches the stream and updates
 * the request.
 */
public final class SchemaIncompatibilityException extends BackfillException {

    private static final long serialVersionUID = 1L;

    public SchemaIncompatibilityException(BackfillRequest request, String reason) {
        super(request, reason, null);
    }

    public SchemaIncompatibilityException(BackfillRequest request, String reason, Throwable cause) {
        super(request, reason, cause);
    }
}
