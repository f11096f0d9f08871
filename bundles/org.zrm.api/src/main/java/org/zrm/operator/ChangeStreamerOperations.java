package org.zrm.operator;

import org.osgi.annotation.versioning.ProviderType;

/** Operator actions on the running change streamer. Thread-safe; may be called from any thread. */
@ProviderType
public interface ChangeStreamerOperations {

    /**
     * Closes one subscriber's subscription with an error frame carrying {@code reason}; a
     * zero-cache subscriber reconnects and catches up from its last acknowledged watermark.
     *
     * @param id the subscriber id, as {@code /status} lists it
     * @param reason shown to the subscriber and logged
     * @throws OperationException if no connected subscriber has this id
     */
    void closeSubscriber(String id, String reason) throws OperationException;

    /**
     * Works out what the next purge would delete, without deleting anything: the same bound and
     * the same conditions as the purge itself, with the rows counted instead of deleted.
     *
     * @throws OperationException if the change log cannot be read
     */
    PurgePreview previewPurge() throws OperationException;
}
