package org.zrm.changesource.pg.internal.sync;

import java.io.ByteArrayOutputStream;

/**
 * Incremental parser of text-format COPY output: fields separated by tab, rows by newline,
 * {@code \N} = NULL, backslash escapes {@code \\ \b \f \n \r \t \v}.
 *
 * <p>DECISION (QUIRK "TSV UTF-8 split across chunks"): fixed. Upstream decodes UTF-8 per chunk
 * segment and corrupts a multibyte character split across chunks; we collect a field's raw bytes
 * and hand them over whole, so the caller decodes complete UTF-8 sequences.
 */
public final class TsvCopyParser {

    private final ByteArrayOutputStream value = new ByteArrayOutputStream();
    private boolean escaped;
    private boolean isNull;

    public void parse(byte[] chunk, CopyFieldSink sink) {
        for (byte b : chunk) {
            if (escaped) {
                escaped = false;
                switch (b) {
                    case 'N' -> isNull = true;
                    case '\\' -> value.write('\\');
                    case 'b' -> value.write('\b');
                    case 'f' -> value.write('\f');
                    case 'n' -> value.write('\n');
                    case 'r' -> value.write('\r');
                    case 't' -> value.write('\t');
                    case 'v' -> value.write(0x0b);
                    default -> throw new IllegalStateException("Unexpected escape character \\" + (char) b);
                }
                continue;
            }
            switch (b) {
                case '\\' -> escaped = true;
                case '\t', '\n' -> {
                    if (isNull && value.size() == 0) {
                        sink.field(null, 0, 0);
                    } else {
                        byte[] v = value.toByteArray();
                        sink.field(v, 0, v.length);
                    }
                    value.reset();
                    isNull = false;
                }
                default -> value.write(b);
            }
        }
    }
}
