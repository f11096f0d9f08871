package org.zrm.replicator.internal;

/**
 * The change streamer rejected the subscription with an error frame ({@code WrongReplicaVersion} or
 * {@code WatermarkTooOld}): resubscribing with the same replica cannot succeed.
 */
final class FatalSubscriptionException extends Exception {

    private static final long serialVersionUID = 1L;

    FatalSubscriptionException(String message) {
        super(message);
    }
}
