package org.zrm.changestreamer.internal;

/**
 * Bundle-private service through which the backup component (PID {@value BackupComponent#PID})
 * reaches the coordinator owned by the change streamer component. Its type lives in a private
 * package, so no other bundle can see or use it; it exists because the coordinator must live as
 * long as the streamer (it holds the streamer's reservations and purge queue), while the strategy
 * has a configuration of its own that must change without restarting the streamer.
 */
interface BackupControl {

    /** @return the streamer's backup-monitor coordinator */
    BackupCoordinator coordinator();
}
