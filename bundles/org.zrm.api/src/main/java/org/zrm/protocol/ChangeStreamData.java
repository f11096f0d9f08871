package org.zrm.protocol;

/**
 * The data-plane subset of {@link ChangeStreamMessage}: {@code begin}, {@code data},
 * {@code commit} and {@code rollback} tuples. These are stored in the change log and forwarded to
 * subscribers unchanged.
 */
public sealed interface ChangeStreamData extends ChangeStreamMessage
        permits ChangeStreamMessage.BeginMessage, ChangeStreamMessage.DataMessage,
                ChangeStreamMessage.CommitMessage, ChangeStreamMessage.RollbackMessage {

    /** The change carried in the second tuple element. */
    Change change();
}
