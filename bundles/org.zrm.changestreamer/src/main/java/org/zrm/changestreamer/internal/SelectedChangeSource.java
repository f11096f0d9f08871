package org.zrm.changestreamer.internal;

import org.zrm.changesource.ChangeSource;

/**
 * The change source that {@link ChangeSourceSelection} bound through the configured target. It is
 * a service of its own so that the target's match is decided by DS (an unmatched target leaves
 * the selection unsatisfied, visible in SCR's DTOs and {@code /status}), while the streamer keeps
 * running across a source's replacement instead of being deactivated with it.
 */
public interface SelectedChangeSource {

    /** The bound change source. */
    ChangeSource source();

    /** The bound source's {@value ChangeSource#TYPE}, for logs and {@code /status}. */
    String type();
}
