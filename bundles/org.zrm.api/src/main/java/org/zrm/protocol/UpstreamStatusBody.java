package org.zrm.protocol;

/**
 * The second element of an upstream {@code status} tuple ({@link ChangeSourceUpstream}): either the
 * {@link Commit} body of a stored transaction or the echo of a {@link DownstreamStatus}.
 */
public sealed interface UpstreamStatusBody permits Commit, DownstreamStatus {
    /** Unknown members of the body. */
    Passthrough extra();
}
