/**
 * The change streamer: forwards every change from the change source to its subscribers, stores it
 * in the change log, and acknowledges it upstream only once stored ("forward, store, ack").
 *
 * <p>{@link org.zrm.changestreamer.ChangeStreamer} is the service the WebSocket endpoints
 * ({@code /replication/v{1..6}/changes} and {@code /snapshot}), the in-process backup replicator
 * and the shell use. Subscriptions deliver pre-serialised JSON frames with per-message consumption
 * acknowledgements ({@link org.zrm.changestreamer.Subscription}).
 *
 * <p>2.0: {@code scheduleCleanup} and {@code clearPendingCleanups} are gone from
 * {@link org.zrm.changestreamer.ChangeStreamer}. Purging is driven only by the active backup
 * monitor, through the {@link org.zrm.backup.CleanupScheduler} its coordinator hands it.
 *
 * <p>2.1: {@link org.zrm.changestreamer.SubscriptionMessage#utf8()}, the message's bytes shared by
 * every subscriber it goes to.
 *
 * <p>2.2: {@link org.zrm.changestreamer.Subscription#onReady}, {@code isReady} and
 * {@code isFinished}, so that a transport can serve many subscriptions from a few sender threads
 * instead of parking one thread per subscription in {@code take()}. A provider type: providers
 * implement them.
 *
 * <p>2.3: {@link org.zrm.changestreamer.SubscriptionMessage#sharedUtf8()}, the shared bytes
 * without a view per call, read with absolute gets; {@code Subscription#poll(SubscriptionMessage[])},
 * a batch of ready messages in one call.
 *
 * <p>2.4: {@code Subscription#consumed(SubscriptionMessage[], int, int)}, a run of
 * acknowledgements in one call.
 *
 * <p>2.5: {@code Subscription#pollShared} and {@code Subscription#consumedNext(int)}, for a
 * transport that acknowledges in order: the streamer's shared messages as they are, reported by
 * count.
 *
 * <p>2.6: {@link org.zrm.changestreamer.SubscriptionMessage#jsonLength()}, a message's length in
 * the unit of the bounds, without reading its text.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.6.0")
package org.zrm.changestreamer;
