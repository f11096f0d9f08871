package org.zrm.pgcluster.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.XZOutputStream;

/** Builds small ustar archives (optionally xz-compressed) for the extractor's tests. */
final class TarFixture {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    TarFixture file(String name, int mode, String content) {
        byte[] data = content.getBytes(StandardCharsets.UTF_8);
        header(name, mode, data.length, '0', "");
        out.writeBytes(data);
        out.writeBytes(new byte[(512 - data.length % 512) % 512]);
        return this;
    }

    TarFixture dir(String name) {
        header(name, 0755, 0, '5', "");
        return this;
    }

    TarFixture symlink(String name, String target) {
        header(name, 0777, 0, '2', target);
        return this;
    }

    TarFixture entry(String name, char type) {
        header(name, 0644, 0, type, "");
        return this;
    }

    byte[] tar() {
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        copy.writeBytes(out.toByteArray());
        copy.writeBytes(new byte[1024]);
        return copy.toByteArray();
    }

    byte[] txz() throws IOException {
        ByteArrayOutputStream compressed = new ByteArrayOutputStream();
        try (XZOutputStream xz = new XZOutputStream(compressed, new LZMA2Options())) {
            xz.write(tar());
        }
        return compressed.toByteArray();
    }

    private void header(String name, int mode, long size, char type, String link) {
        byte[] h = new byte[512];
        put(h, 0, name);
        put(h, 100, String.format("%07o", mode));
        put(h, 108, "0000000");
        put(h, 116, "0000000");
        put(h, 124, String.format("%011o", size));
        put(h, 136, "00000000000");
        h[156] = (byte) type;
        put(h, 157, link);
        put(h, 257, "ustar");
        put(h, 263, "00");
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, String.format("%06o", sum));
        h[154] = 0;
        out.writeBytes(h);
    }

    private static void put(byte[] h, int offset, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(bytes, 0, h, offset, bytes.length);
    }
}
