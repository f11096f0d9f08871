package org.zrm.protocol;

import java.util.Objects;

/**
 * Progress of a backfill, for display: {@code {"rows":…,"totalRows":…,"totalBytes":…}}.
 *
 * @param rows rows sent so far
 * @param totalRows estimated total rows
 * @param totalBytes estimated total bytes; {@code null} = absent
 * @param extra unknown members
 */
public record DownloadStatus(long rows, long totalRows, Long totalBytes, Passthrough extra) {

    public DownloadStatus {
        Objects.requireNonNull(extra, "extra").requireNoneOf("rows", "totalRows", "totalBytes");
    }
}
