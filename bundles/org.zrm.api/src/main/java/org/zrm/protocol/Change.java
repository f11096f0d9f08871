package org.zrm.protocol;

/**
 * A change object: the second element of {@code begin}, {@code data}, {@code commit} and
 * {@code rollback} tuples. Every change is a JSON object with a {@code tag} member.
 */
public sealed interface Change permits Begin, Commit, Rollback, DataOrSchemaChange {

    /** The value of the {@code tag} member. */
    String tag();

    /** Unknown members of the change object. */
    Passthrough extra();

    /** Whether this is a data change, a schema change or neither. */
    default ChangeKind kind() {
        return ChangeKind.NONE;
    }

    /** Upstream {@code isDataChange}. */
    default boolean isDataChange() {
        return kind() == ChangeKind.DATA;
    }

    /** Upstream {@code isSchemaChange}. */
    default boolean isSchemaChange() {
        return kind() == ChangeKind.SCHEMA;
    }
}
