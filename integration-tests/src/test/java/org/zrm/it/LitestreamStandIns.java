package org.zrm.it;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.function.Supplier;

import com.sun.net.httpserver.HttpServer;

/**
 * Stand-ins for a litestream v0.3 backup that a test controls: the {@code /metrics} endpoint of the
 * rocicorp fork (which stock litestream does not have) and a {@code litestream} CLI whose
 * destination holds one snapshot.
 */
final class LitestreamStandIns {

    private LitestreamStandIns() {
    }

    /** @return the Prometheus line claiming that {@code watermark} was backed up at {@code epochSeconds} */
    static String progress(String watermark, double epochSeconds) {
        return "# HELP litestream_replica_progress Replica progress\n"
                + "# TYPE litestream_replica_progress gauge\n"
                + "litestream_replica_progress{db=\"replica.db\",name=\"file\",watermark=\"" + watermark + "\"} "
                + epochSeconds + "\n";
    }

    /** Serves {@code body} (read at each request) as {@code /metrics} on 127.0.0.1; the caller stops it. */
    static HttpServer metrics(Supplier<String> body) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics", exchange -> {
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        return server;
    }

    /**
     * A litestream v0.3 CLI: {@code snapshots} lists one snapshot created at {@code dateArgs}
     * (arguments of {@code date -u}, e.g. {@code "-d '2 hours ago'"}, empty for now), {@code wal}
     * lists nothing.
     */
    static Path cli(Path dir, String dateArgs) throws IOException {
        Path p = dir.resolve("litestream");
        Files.writeString(p, "#!/bin/sh\n"
                + "created=$(date -u " + dateArgs + " +%Y-%m-%dT%H:%M:%SZ)\n"
                + "case \"$1\" in\n"
                + "  snapshots) echo 'replica  generation        index  size     created';"
                + " echo \"file     0123456789abcdef  1      4096     $created\" ;;\n"
                + "  wal) echo 'replica  generation        index  offset  size  created' ;;\n"
                + "  *) exit 1 ;;\n"
                + "esac\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }
}
