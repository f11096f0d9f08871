package org.zrm.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real headless Chromium (Debian's {@code chromium}), driven over the Chrome DevTools Protocol
 * with the JDK's HTTP client: navigate, evaluate JavaScript, take a screenshot. No WebDriver
 * library, so the test needs nothing from Maven that could try to download a browser.
 */
final class HeadlessChromium implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    private HeadlessChromium(Process process, Path profile, WebSocket socket) {
        this.process = process;
        this.profile = profile;
        this.socket = socket;
    }

    /**
     * Starts the browser with an empty profile; the flags keep it off the (closed) network.
     *
     * @throws IllegalStateException if no Chromium is installed, naming the package to install
     */
    static HeadlessChromium start() throws Exception {
        String binary = System.getenv().getOrDefault("ZRM_CHROMIUM", "/usr/bin/chromium");
        if (!Files.isExecutable(Path.of(binary))) {
            throw new IllegalStateException("no Chromium at " + binary + ": install Debian's chromium package"
                    + " (.ci/run does) or set ZRM_CHROMIUM");
        }
        Path profile = Files.createTempDirectory("zrm-chromium-");
        Process p = new ProcessBuilder(binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=" + profile,
                "--window-size=1280,900", "about:blank")
                .redirectErrorStream(true).redirectOutput(profile.resolve("chromium.log").toFile()).start();
        try {
            Path portFile = profile.resolve("DevToolsActivePort");
            long deadline = System.nanoTime() + WAIT.toNanos();
            // Chromium announces its DevTools port only through this file; there is nothing to wait on.
            while (!Files.isRegularFile(portFile) || Files.readAllLines(portFile).isEmpty()) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("Chromium did not start: " + Files.readString(profile.resolve("chromium.log")));
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
            int port = Integer.parseInt(Files.readAllLines(portFile).get(0).strip());
            HttpClient http = HttpClient.newHttpClient();
            JsonNode targets = JSON.readTree(http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/json/list")).build(), HttpResponse.BodyHandlers.ofString()).body());
            String ws = null;
            for (JsonNode t : targets) {
                if ("page".equals(t.path("type").asText())) {
                    ws = t.path("webSocketDebuggerUrl").asText();
                    break;
                }
            }
            if (ws == null) {
                throw new IllegalStateException("Chromium has no page target: " + targets);
            }
            HeadlessChromium[] self = new HeadlessChromium[1];
            WebSocket socket = http.newWebSocketBuilder().buildAsync(URI.create(ws), new WebSocket.Listener() {
                private final StringBuilder partial = new StringBuilder();

                @Override
                public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                    partial.append(data);
                    if (last) {
                        self[0].received(partial.toString());
                        partial.setLength(0);
                    }
                    webSocket.request(1);
                    return null;
                }
            }).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            self[0] = new HeadlessChromium(p, profile, socket);
            return self[0];
        } catch (Exception | Error e) {
            p.destroyForcibly();
            throw e;
        }
    }

    private void received(String text) {
        try {
            JsonNode m = JSON.readTree(text);
            if (m.has("id")) {
                CompletableFuture<JsonNode> f = pending.remove(m.get("id").asInt());
                if (f != null) {
                    if (m.has("error")) {
                        f.completeExceptionally(new IllegalStateException("DevTools error: " + m.get("error")));
                    } else {
                        f.complete(m.path("result"));
                    }
                }
            }
        } catch (IOException e) {
            pending.values().forEach(f -> f.completeExceptionally(e));
        }
    }

    /** Sends one DevTools command and waits for its result. */
    JsonNode call(String method, Map<String, Object> params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> result = new CompletableFuture<>();
        pending.put(id, result);
        ObjectNode message = JSON.createObjectNode().put("id", id).put("method", method);
        message.set("params", JSON.valueToTree(params));
        socket.sendText(JSON.writeValueAsString(message), true).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        return result.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    void navigate(String url) throws Exception {
        call("Page.navigate", Map.of("url", url));
    }

    /** The value of a JavaScript expression in the page, as JSON. */
    JsonNode evaluate(String expression) throws Exception {
        JsonNode r = call("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true));
        if (r.has("exceptionDetails")) {
            throw new IllegalStateException("page threw: " + r.get("exceptionDetails"));
        }
        return r.path("result").path("value");
    }

    /** The text of the element with {@code id}, or {@code null} while it does not exist. */
    String text(String id) throws Exception {
        JsonNode v = evaluate("(e => e ? e.textContent : null)(document.getElementById('" + id + "'))");
        return v.isNull() || v.isMissingNode() ? null : v.asText();
    }

    /** Waits, bounded, until the element's text satisfies {@code condition}; returns that text. */
    String awaitText(String id, java.util.function.Predicate<String> condition, String what) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String t = text(id);
        // The page itself polls every second; the test samples what a person would see.
        while (t == null || !condition.test(t)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " not shown within " + WAIT + ": #" + id + " = " + t);
            }
            TimeUnit.MILLISECONDS.sleep(200);
            t = text(id);
        }
        return t;
    }

    /** Saves a PNG screenshot of the page. */
    void screenshot(Path file) throws Exception {
        JsonNode r = call("Page.captureScreenshot", Map.of("format", "png"));
        Files.createDirectories(file.getParent());
        Files.write(file, Base64.getDecoder().decode(r.path("data").asText()));
    }

    @Override
    public void close() throws Exception {
        socket.abort();
        // Chromium's helpers (renderer, GPU, crashpad) are its children and go on writing into the
        // profile for a moment after the main process exits: stop them all before removing it.
        List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
        tree.add(process.toHandle());
        tree.forEach(ProcessHandle::destroy);
        for (ProcessHandle h : tree) {
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                h.destroyForcibly();
            }
        }
        try (var files = Files.walk(profile)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            // A leftover temporary profile is not the test's result: say where it is and go on.
            System.out.println("HeadlessChromium: profile " + profile + " left behind: " + e);
        }
    }

}
