package org.zrm.replica.apply;

/**
 * The outcome of a committed transaction.
 *
 * @param watermark the new {@code stateVersion}
 * @param schemaUpdated whether the transaction changed the schema
 * @param changeLogUpdated whether it wrote {@code _zero.changeLog2} entries
 */
public record CommitResult(String watermark, boolean schemaUpdated, boolean changeLogUpdated) {}
