package org.zrm.changesource.pg.internal.sync;

/** Receives the fields of COPY rows in order; {@code null} bytes mean SQL NULL. */
public interface CopyFieldSink {
    /**
     * @param buf field bytes (only valid during the call), or {@code null} for NULL
     */
    void field(byte[] buf, int off, int len);
}
