package io.sandboxes.local.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.FileOptions;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.WriteEntry;
import io.sandboxes.e2b.WriteInfo;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 24 item 2, the file transfer paths the local server cannot show, against a scripted
 * daemon (a JDK HTTP server on loopback): a read answered gzip-compressed (the local server always
 * answers uncompressed, which HTTP allows), the wire form of several files in one multipart
 * request and of its per-file fallback, a streamed read whose answer stalls (bounded by the idle
 * timeout), a daemon that does not answer at all (bounded by the call's request timeout), a
 * write answered without saying what it wrote, and the watch options as they go on the wire
 * (network mounts cannot be had locally).
 */
class FilesScriptedServerTest {
  private static final String ID = "scripted-files";

  /** One request as the scripted daemon saw it. */
  record Seen(String method, String path, Map<String, String> query, Map<String, List<String>> headers, byte[] body) {}

  private HttpServer server;
  private E2BSandboxProvider provider;
  private LiveSandbox sandbox;
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private volatile Handler files = ex -> reply(ex, 200, "application/json", "[]".getBytes(StandardCharsets.UTF_8));

  @FunctionalInterface
  interface Handler {
    void handle(HttpExchange ex) throws IOException;
  }

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/v2/sandboxes/" + ID + "/connect", ex -> reply(ex, 200, "application/json", ("{\"sandboxID\":\"" + ID
        + "\",\"templateID\":\"base\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"t0ken\"}").getBytes(StandardCharsets.UTF_8)));
    server.createContext("/files", ex -> {
      byte[] body = ex.getRequestBody().readAllBytes();
      seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().getPath(), query(ex.getRequestURI()), Map.copyOf(ex.getRequestHeaders()), body));
      files.handle(ex);
    });
    server.createContext("/filesystem.Filesystem/Stat", ex -> stall(ex));
    server.createContext("/filesystem.Filesystem/WatchDir", ex -> {
      byte[] body = ex.getRequestBody().readAllBytes();
      seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().getPath(), Map.of(), Map.copyOf(ex.getRequestHeaders()), body));
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.write(envelope(0, "{\"start\":{}}"));
      out.write(envelope(0, "{\"filesystem\":{\"name\":\"a.txt\",\"type\":\"EVENT_TYPE_CREATE\"}}"));
      out.write(envelope(2, "{}"));
      reply(ex, 200, "application/connect+json", out.toByteArray());
    });
    server.start();
    URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    provider = E2BSandboxProvider.builder().apiUrl(url).sandboxUrl(url).apiKey("e2b_scripted").environment(Map.of()).build();
    sandbox = provider.api().connect(ID);
  }

  @AfterEach
  void stop() {
    release.countDown();
    provider.close();
    server.stop(0);
  }

  private static Map<String, String> query(URI uri) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    String raw = uri.getRawQuery();
    if (raw != null) {
      for (String kv : raw.split("&")) {
        int eq = kv.indexOf('=');
        out.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  private static void reply(HttpExchange ex, int status, String type, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  private static byte[] envelope(int flags, String json) {
    byte[] payload = json.getBytes(StandardCharsets.UTF_8);
    return java.nio.ByteBuffer.allocate(5 + payload.length).put((byte) flags).putInt(payload.length).put(payload).array();
  }

  /** Answers nothing until the test ends. */
  private void stall(HttpExchange ex) throws IOException {
    try {
      release.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ex.close();
  }

  private static byte[] gzip(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream z = new GZIPOutputStream(out)) {
      z.write(data);
    }
    return out.toByteArray();
  }

  @Test
  @DisplayName("gzip read: Accept-Encoding: gzip is sent only when asked, and a gzip answer comes back decompressed, whole and streamed")
  void gzipRead() throws Exception {
    byte[] content = "compressed on the wire ".repeat(2000).getBytes(StandardCharsets.UTF_8);
    files = ex -> {
      ex.getResponseHeaders().set("Content-Encoding", "gzip");
      reply(ex, 200, "application/octet-stream", gzip(content));
    };
    FileOptions gz = FileOptions.defaults().withGzip(true);
    assertThat(sandbox.files().readBytes("/data/a.txt", gz)).isEqualTo(content);
    try (InputStream in = sandbox.files().readStream("/data/a.txt", gz)) {
      assertThat(in.readAllBytes()).isEqualTo(content);
    }
    assertThat(seen).hasSize(2).allSatisfy(s -> assertThat(s.headers().get("Accept-encoding")).containsExactly("gzip"));

    files = ex -> reply(ex, 200, "application/octet-stream", content);
    seen.clear();
    assertThat(sandbox.files().readBytes("/data/a.txt")).isEqualTo(content);
    assertThat(seen.get(0).headers()).doesNotContainKey("Accept-encoding");
  }

  @Test
  @DisplayName("several files: one multipart POST without a path, each part named by its path, the user and metadata once; a path a part cannot carry falls back to one raw POST per file")
  void severalFilesOnTheWire() {
    files = ex -> reply(ex, 200, "application/json", ("[{\"path\":\"/a.txt\",\"name\":\"a.txt\",\"type\":\"file\"},"
        + "{\"path\":\"/home/root/b.txt\",\"name\":\"b.txt\",\"type\":\"file\",\"metadata\":{\"k\":\"v\"}}]").getBytes(StandardCharsets.UTF_8));
    FileOptions opts = FileOptions.defaults().withUser("root").withMetadata(Map.of("k", "v"));
    List<WriteInfo> out = sandbox.files().write(List.of(WriteEntry.of("/a.txt", "AAA"),
        WriteEntry.of("b.txt", new java.io.ByteArrayInputStream("BBB".getBytes(StandardCharsets.UTF_8)))), opts);
    assertThat(out).extracting(WriteInfo::path).containsExactly("/a.txt", "/home/root/b.txt");
    assertThat(out.get(1).metadata()).containsEntry("k", "v");
    assertThat(seen).hasSize(1);
    Seen s = seen.get(0);
    assertThat(s.query()).containsExactly(Map.entry("username", "root"));
    assertThat(s.headers().get("Content-type").get(0)).startsWith("multipart/form-data; boundary=");
    assertThat(s.headers().get("X-metadata-k")).containsExactly("v");
    String body = new String(s.body(), StandardCharsets.UTF_8);
    assertThat(body).contains("name=\"file\"; filename=\"/a.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nAAA\r\n")
        .contains("filename=\"b.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nBBB\r\n").endsWith("--\r\n");

    seen.clear();
    files = ex -> reply(ex, 200, "application/json", "[{\"path\":\"/x\",\"name\":\"x\",\"type\":\"file\"}]".getBytes(StandardCharsets.UTF_8));
    sandbox.files().write(List.of(WriteEntry.of("/quote\"d.txt", "1"), WriteEntry.of("/plain.txt", "2")));
    assertThat(seen).extracting(x -> x.query().get("path")).containsExactly("/quote\"d.txt", "/plain.txt");
    assertThat(seen).allSatisfy(x -> assertThat(x.headers().get("Content-type")).containsExactly("application/octet-stream"));
  }

  @Test
  @DisplayName("a streamed read whose answer stalls fails within its idle timeout, not never")
  void stalledStream() throws Exception {
    files = ex -> {
      ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
      ex.sendResponseHeaders(200, 1 << 20);
      OutputStream out = ex.getResponseBody();
      out.write(new byte[10]);
      out.flush();
      try {
        release.await(60, TimeUnit.SECONDS); // the rest never comes while the test runs
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      ex.close();
    };
    long started = System.nanoTime();
    try (InputStream in = sandbox.files().readStream("/slow.bin", FileOptions.defaults().withStreamIdleTimeout(Duration.ofSeconds(1)))) {
      assertThat(in.readNBytes(10)).hasSize(10);
      assertThatThrownBy(() -> in.read()).isInstanceOf(java.net.SocketTimeoutException.class).hasMessageContaining("no bytes arrived");
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  @DisplayName("a write answered 200 without saying what it wrote is an error from files().write; the contract's writeBytes, which answers nothing, accepts it")
  void writeWithoutAnswer() {
    files = ex -> reply(ex, 200, "application/json", new byte[0]);
    assertThatThrownBy(() -> sandbox.files().write("/x.txt", "x")).isInstanceOf(SandboxException.class)
        .hasMessageContaining("without saying what it wrote");
    sandbox.writeBytes("/x.txt", new byte[] {1});
    assertThat(seen).hasSize(2);
  }

  @Test
  @DisplayName("a call's own request timeout bounds the wait for a daemon that does not answer, on /files and on an RPC")
  void requestTimeout() {
    files = this::stall;
    FileOptions oneSecond = FileOptions.defaults().withRequestTimeout(Duration.ofSeconds(1));
    long started = System.nanoTime();
    assertThatThrownBy(() -> sandbox.files().readBytes("/slow.txt", oneSecond)).isInstanceOf(SandboxException.class)
        .hasMessageContaining("no answer");
    assertThatThrownBy(() -> sandbox.files().getInfo("/slow.txt", oneSecond)).isInstanceOf(SandboxException.class)
        .hasMessageContaining("no answer");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  @DisplayName("watchDir's options on the wire: recursive, includeEntry and allowNetworkMounts in the request, the deadline as Connect-Timeout-Ms (60 s by default, as E2B), the user as Basic auth; a clean end reaches onExit with null")
  void watchOptionsOnTheWire() throws Exception {
    List<io.sandboxes.e2b.FilesystemEvent> events = new CopyOnWriteArrayList<>();
    java.util.concurrent.CompletableFuture<java.util.Optional<Throwable>> exit = new java.util.concurrent.CompletableFuture<>();
    sandbox.files().watchDir("/mnt/share", events::add, io.sandboxes.e2b.WatchOptions.defaults().withRecursive(true)
        .withIncludeEntry(true).withAllowNetworkMounts(true).withUser("root")
        .withOnExit(t -> exit.complete(java.util.Optional.ofNullable(t))));
    assertThat(exit.get(20, TimeUnit.SECONDS)).isEmpty();
    assertThat(events).extracting(io.sandboxes.e2b.FilesystemEvent::name).containsExactly("a.txt");
    sandbox.files().watchDir("/mnt/share", e -> { }, io.sandboxes.e2b.WatchOptions.defaults().withTimeout(Duration.ofSeconds(5))).stop();

    assertThat(seen).hasSize(2);
    Seen first = seen.get(0);
    com.fasterxml.jackson.databind.JsonNode req = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(java.util.Arrays.copyOfRange(first.body(), 5, first.body().length));
    assertThat(req.path("path").asText()).isEqualTo("/mnt/share");
    assertThat(req.path("recursive").asBoolean()).isTrue();
    assertThat(req.path("includeEntry").asBoolean()).isTrue();
    assertThat(req.path("allowNetworkMounts").asBoolean()).isTrue();
    assertThat(first.headers().get("Connect-timeout-ms")).containsExactly("60000");
    assertThat(first.headers().get("Authorization")).containsExactly("Basic "
        + java.util.Base64.getEncoder().encodeToString("root:".getBytes(StandardCharsets.UTF_8)));
    assertThat(seen.get(1).headers().get("Connect-timeout-ms")).containsExactly("5000");
    assertThat(seen.get(1).headers()).doesNotContainKey("Authorization");
  }
}
