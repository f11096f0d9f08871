package org.zrm.changesource.pg.internal.backfill;

import org.zrm.protocol.BackfillRequest;

/**
 * A non-empty table without a row key cannot be backfilled: a retried run would write its rows
 * twice. It is retried with back-off, and succeeds once the table gets a key or is emptied.
 */
public final class MissingRowKeyException extends BackfillException {

    private static final long serialVersionUID = 1L;

    public MissingRowKeyException(BackfillRequest request) {
        super(request, "\"" + request.table().name() + "\" is missing a PRIMARY KEY", null);
    }
}
