package org.zrm.pgcluster.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.zrm.pgcluster.PgClusterException;

/**
 * Extracts a tar stream (ustar, with GNU long names and pax path records) into a folder: regular
 * files with their permission bits, folders and symbolic links. Anything that would land outside
 * the folder (absolute names, {@code ..}, links pointing out) and any other entry type (hard
 * links, devices) is refused, so a bad archive cannot write elsewhere.
 */
final class TarExtractor {
    private static final int BLOCK = 512;
    /** Longest name a GNU long-name or pax record may give; the PostgreSQL archives stay far below. */
    private static final int MAX_NAME = 4096;
    /** Largest pax header accepted; larger ones are not path records. */
    private static final int MAX_PAX = 64 * 1024;

    private TarExtractor() {}

    static void extract(InputStream in, Path dest) throws IOException {
        Files.createDirectories(dest);
        Path root = dest.toAbsolutePath().normalize();
        byte[] header = new byte[BLOCK];
        String longName = null;
        String longLink = null;
        while (true) {
            if (!readBlock(in, header)) {
                return;   // end of stream without the terminating zero blocks: tolerated, as tar does
            }
            if (isZero(header)) {
                return;
            }
            char type = (char) header[156];
            long size = octal(header, 124, 12);
            String name = longName != null ? longName : name(header);
            String link = longLink != null ? longLink : string(header, 157, 100);
            switch (type) {
                case 'L', 'K' -> {
                    String value = stripNul(new String(readData(in, size, MAX_NAME), StandardCharsets.UTF_8));
                    if (type == 'L') {
                        longName = value;
                    } else {
                        longLink = value;
                    }
                    continue;
                }
                case 'x' -> {
                    String pax = new String(readData(in, size, MAX_PAX), StandardCharsets.UTF_8);
                    longName = paxValue(pax, "path", longName);
                    longLink = paxValue(pax, "linkpath", longLink);
                    continue;
                }
                case 'g' -> {
                    skip(in, padded(size));
                    continue;
                }
                default -> { }
            }
            longName = null;
            longLink = null;
            Path target = inside(root, name);
            switch (type) {
                case '0', '\0', '7' -> {
                    Files.createDirectories(target.getParent());
                    try (OutputStream out = Files.newOutputStream(target)) {
                        copy(in, out, size);
                    }
                    skip(in, padded(size) - size);
                    Files.setPosixFilePermissions(target, permissions((int) octal(header, 100, 8)));
                }
                case '5' -> {
                    Files.createDirectories(target);
                    skip(in, padded(size));
                }
                case '2' -> {
                    Path pointsTo = target.getParent().resolve(link).normalize();
                    if (Path.of(link).isAbsolute() || !pointsTo.startsWith(root)) {
                        throw new PgClusterException("tar symbolic link " + name + " points outside the target folder: '" + link + "'");
                    }
                    Files.createDirectories(target.getParent());
                    Files.deleteIfExists(target);
                    Files.createSymbolicLink(target, Path.of(link));
                    skip(in, padded(size));
                }
                default -> throw new PgClusterException("unsupported tar entry type '" + type + "' for " + name);
            }
        }
    }

    /** Deletes a folder tree without following symbolic links; a missing folder is fine. */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                if (exc != null) {
                    throw exc;
                }
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static Path inside(Path root, String name) {
        if (name.isEmpty() || name.startsWith("/")) {
            throw new PgClusterException("tar entry with an absolute or empty name: '" + name + "'");
        }
        Path target = root.resolve(name).normalize();
        if (!target.startsWith(root)) {
            throw new PgClusterException("tar entry points outside the target folder: '" + name + "'");
        }
        return target;
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << i)) != 0) {
                perms.add(bits[i]);
            }
        }
        // Nobody but the owner may change what the server executes.
        perms.remove(PosixFilePermission.GROUP_WRITE);
        perms.remove(PosixFilePermission.OTHERS_WRITE);
        perms.add(PosixFilePermission.OWNER_READ);
        perms.add(PosixFilePermission.OWNER_WRITE);
        return perms;
    }

    private static String name(byte[] header) {
        String name = string(header, 0, 100);
        boolean ustar = new String(header, 257, 5, StandardCharsets.US_ASCII).equals("ustar");
        String prefix = ustar ? string(header, 345, 155) : "";
        return prefix.isEmpty() ? name : prefix + "/" + name;
    }

    private static String paxValue(String pax, String key, String fallback) {
        // Records are "<length> <key>=<value>\n".
        for (String record : pax.split("\n")) {
            int space = record.indexOf(' ');
            if (space > 0 && record.startsWith(key + "=", space + 1)) {
                return record.substring(space + 2 + key.length());
            }
        }
        return fallback;
    }

    private static String string(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static String stripNul(String s) {
        int nul = s.indexOf('\0');
        return nul < 0 ? s : s.substring(0, nul);
    }

    private static long octal(byte[] header, int offset, int length) {
        long value = 0;
        for (int i = offset; i < offset + length; i++) {
            byte b = header[i];
            if (b == 0 || b == ' ') {
                if (value > 0) {
                    break;
                }
                continue;
            }
            if (b < '0' || b > '7') {
                throw new PgClusterException("corrupt tar header: not an octal number at offset " + offset);
            }
            value = value * 8 + (b - '0');
        }
        return value;
    }

    private static long padded(long size) {
        return (size + BLOCK - 1) / BLOCK * BLOCK;
    }

    private static byte[] readData(InputStream in, long size, int limit) throws IOException {
        if (size > limit) {
            throw new PgClusterException("tar header record of " + size + " bytes exceeds " + limit);
        }
        byte[] data = in.readNBytes((int) size);
        if (data.length < size) {
            throw new EOFException("tar stream ends inside a header record");
        }
        skip(in, padded(size) - size);
        return data;
    }

    private static boolean readBlock(InputStream in, byte[] block) throws IOException {
        int n = in.readNBytes(block, 0, BLOCK);
        if (n == 0) {
            return false;
        }
        if (n < BLOCK) {
            throw new EOFException("tar stream ends inside a header");
        }
        return true;
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static void copy(InputStream in, OutputStream out, long size) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long left = size;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                throw new EOFException("tar stream ends inside a file");
            }
            out.write(buffer, 0, n);
            left -= n;
        }
    }

    private static void skip(InputStream in, long n) throws IOException {
        long left = n;
        while (left > 0) {
            long skipped = in.skip(left);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    throw new EOFException("tar stream ends early");
                }
                skipped = 1;
            }
            left -= skipped;
        }
    }
}
