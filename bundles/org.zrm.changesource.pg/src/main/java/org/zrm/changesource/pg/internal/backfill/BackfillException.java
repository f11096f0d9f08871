package org.zrm.changesource.pg.internal.backfill;

import java.util.Objects;
import org.zrm.changesource.ChangeSourceException;
import org.zrm.protocol.BackfillRequest;

/**
 * A backfill request that cannot be served in the table's current state. The message names the
 * table and columns in upstream's form: {@code Cannot backfill schema.table[c1,c2]: reason}.
 * The manager retries the request later; nothing is written for a failed run.
 */
public abstract sealed class BackfillException extends ChangeSourceException
        permits SchemaIncompatibilityException, MissingRowKeyException {

    private static final long serialVersionUID = 1L;

    protected BackfillException(BackfillRequest request, String reason, Throwable cause) {
        super(describe(request, reason), cause);
    }

    static String describe(BackfillRequest request, String reason) {
        Objects.requireNonNull(request, "request");
        return "Cannot backfill " + request.table().schema() + "." + request.table().name()
                + "[" + String.join(",", request.columns().keySet()) + "]: " + reason;
    }
}
