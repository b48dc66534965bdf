package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxAuthenticationException;
import io.sandboxes.e2b.ScriptedServer.Request;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * E2B's volume content API and volume tokens on the wire, against a {@link ScriptedServer}: the local server does not serve {@code /volumecontent} yet, so the
 * requests are checked in the form E2B's SDK 2.51 and its OpenAPI description of the volume
 * content API give, answers included.
 */
class VolumeContentWireTest {
  private static final String KEY = "e2b_volumes0123456789abcdef";
  private static final String TOKEN = "vtok-0123456789abcdef";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String STAT = """
      {"name":"%s","type":"%s","path":"%s","size":%d,"mode":420,"uid":1000,"gid":1001,
       "atime":"2026-01-02T03:04:05Z","mtime":"2026-01-02T03:04:06.5Z","ctime":"2026-01-02T03:04:07+01:00"%s}""";

  /** What the scripted server answers: status and body; null body for none. */
  record Answer(int status, String body) {}

  private final Map<String, Answer> answers = new ConcurrentHashMap<>();
  /** The test's own threads, for calls made while the server answers. */
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private ScriptedServer server;
  private List<Request> seen;
  private E2BSandboxProvider provider;
  private URI url;

  @BeforeEach
  void start() {
    server = ScriptedServer.start(r -> {
      Answer a = answers.getOrDefault(r.line(), new Answer(500, "{\"code\":500,\"message\":\"unscripted\"}"));
      return a.body() == null ? ScriptedServer.Answer.empty(a.status()) : ScriptedServer.Answer.json(a.status(), a.body());
    });
    seen = server.requests();
    url = server.url();
    provider = E2BSandboxProvider.builder().apiUrl(url).sandboxUrl(url).apiKey(KEY).environment(Map.of()).build();
    answers.put("GET /volumes/vol1", new Answer(200, "{\"volumeID\":\"vol1\",\"name\":\"data\",\"token\":\"" + TOKEN + "\"}"));
  }

  @AfterEach
  void stop() {
    provider.close();
    server.close();
    threads.shutdownNow();
  }

  private static String stat(String path, String type, long size, String extra) {
    return STAT.formatted(path.substring(path.lastIndexOf('/') + 1), type, path, size, extra);
  }

  private Request last(String method, String path) {
    List<Request> r = seen.stream().filter(q -> q.method().equals(method) && q.path().equals(path)).toList();
    assertThat(r).as(method + " " + path + " among " + seen).isNotEmpty();
    return r.get(r.size() - 1);
  }

  private Volume connect() {
    return provider.api().volumes().withContentUrl(url).connect("vol1");
  }

  private static void bearerOnly(Request r) {
    assertThat(r.headers().getFirst("Authorization")).isEqualTo("Bearer " + TOKEN);
    assertThat(r.headers().containsKey("X-API-KEY")).as("the API key stays off content calls").isFalse();
  }

  @Test
  @DisplayName("connect reads the token with the API key; every content call carries the token as Bearer, its path and options as the query, and reads VolumeEntryStat")
  void contentCallsOnTheWire() throws Exception {
    Volume v = connect();
    Request get = last("GET", "/volumes/vol1");
    assertThat(get.headers().getFirst("X-API-KEY")).isEqualTo(KEY);
    assertThat(get.headers().containsKey("Authorization")).isFalse();
    assertThat(v.volumeId()).isEqualTo("vol1");
    assertThat(v.name()).isEqualTo("data");
    assertThat(v.token()).isEqualTo(TOKEN);
    assertThat(v.domain()).isNull();
    assertThat(v.toString()).doesNotContain(TOKEN);

    answers.put("GET /volumecontent/vol1/dir", new Answer(200, "[" + stat("/a", "directory", 0, "") + ","
        + stat("/a/l", "symlink", 0, ",\"target\":\"/a/f\"") + "]"));
    List<VolumeEntry> listed = v.list("/", 2);
    Request list = last("GET", "/volumecontent/vol1/dir");
    bearerOnly(list);
    assertThat(list.query()).isEqualTo("path=%2F&depth=2");
    assertThat(listed).hasSize(2);
    VolumeEntry dir = listed.get(0);
    assertThat(dir.type()).isEqualTo(VolumeFileType.DIRECTORY);
    assertThat(dir.path()).isEqualTo("/a");
    assertThat(dir.mode()).isEqualTo(0644);
    assertThat(dir.uid()).isEqualTo(1000);
    assertThat(dir.gid()).isEqualTo(1001);
    assertThat(dir.atime()).isEqualTo(Instant.parse("2026-01-02T03:04:05Z"));
    assertThat(dir.mtime()).isEqualTo(Instant.parse("2026-01-02T03:04:06.500Z"));
    assertThat(dir.ctime()).isEqualTo(Instant.parse("2026-01-02T02:04:07Z"));
    assertThat(dir.target()).isNull();
    assertThat(listed.get(1).type()).isEqualTo(VolumeFileType.SYMLINK);
    assertThat(listed.get(1).target()).isEqualTo("/a/f");

    answers.put("POST /volumecontent/vol1/dir", new Answer(201, stat("/a b/c", "directory", 0, "")));
    v.makeDir("/a b/c", VolumeWriteOptions.DEFAULTS.withOwner(1000, 1001).withMode(0755).withForce(true));
    Request mk = last("POST", "/volumecontent/vol1/dir");
    bearerOnly(mk);
    assertThat(mk.query()).isEqualTo("path=%2Fa%20b%2Fc&uid=1000&gid=1001&mode=493&force=true");
    assertThat(mk.body()).isEmpty();

    answers.put("GET /volumecontent/vol1/path", new Answer(200, stat("/a/f", "file", 5, "")));
    assertThat(v.getInfo("/a/f").size()).isEqualTo(5);
    assertThat(last("GET", "/volumecontent/vol1/path").query()).isEqualTo("path=%2Fa%2Ff");
    assertThat(v.exists("/a/f")).isTrue();

    answers.put("PATCH /volumecontent/vol1/path", new Answer(200, stat("/a/f", "file", 5, "")));
    v.updateMetadata("/a/f", VolumeWriteOptions.DEFAULTS.withMode(0600));
    Request patch = last("PATCH", "/volumecontent/vol1/path");
    bearerOnly(patch);
    assertThat(patch.query()).isEqualTo("path=%2Fa%2Ff");
    assertThat(patch.headers().getFirst("Content-Type")).isEqualTo("application/json");
    assertThat(JSON.readTree(patch.body())).isEqualTo(JSON.readTree("{\"mode\":384}"));

    answers.put("PUT /volumecontent/vol1/file", new Answer(201, stat("/a/f", "file", 5, "")));
    v.writeFile("/a/f", "hello".getBytes(StandardCharsets.UTF_8), VolumeWriteOptions.DEFAULTS.withForce(true));
    Request put = last("PUT", "/volumecontent/vol1/file");
    bearerOnly(put);
    assertThat(put.query()).isEqualTo("path=%2Fa%2Ff&force=true");
    assertThat(put.headers().getFirst("Content-Type")).isEqualTo("application/octet-stream");
    assertThat(new String(put.body(), StandardCharsets.UTF_8)).isEqualTo("hello");

    answers.put("GET /volumecontent/vol1/file", new Answer(200, "bytes back"));
    assertThat(v.readText("/a/f")).isEqualTo("bytes back");
    bearerOnly(last("GET", "/volumecontent/vol1/file"));
    try (InputStream in = v.readStream("/a/f")) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("bytes back");
    }

    answers.put("DELETE /volumecontent/vol1/path", new Answer(204, null));
    v.remove("/a/f");
    Request del = last("DELETE", "/volumecontent/vol1/path");
    bearerOnly(del);
    assertThat(del.query()).isEqualTo("path=%2Fa%2Ff");
  }

  @Test
  @DisplayName("a missing path, a missing volume and a refused token are typed; exists is false only on 404; the token never shows")
  void typedErrors() {
    Volume v = connect();
    answers.put("GET /volumecontent/vol1/path", new Answer(404, "{\"code\":404,\"message\":\"no such path\"}"));
    assertThat(v.exists("/gone")).isFalse();
    assertThatThrownBy(() -> v.getInfo("/gone")).isInstanceOfSatisfying(VolumePathNotFoundException.class,
        e -> assertThat(e.path()).isEqualTo("/gone"));
    answers.put("GET /volumecontent/vol1/file", new Answer(404, "{\"code\":404,\"message\":\"no such file\"}"));
    assertThatThrownBy(() -> v.readStream("/gone")).isInstanceOf(VolumePathNotFoundException.class);
    assertThatThrownBy(() -> v.readFile("/gone")).isInstanceOf(VolumePathNotFoundException.class);

    answers.put("GET /volumecontent/vol1/path", new Answer(500, "{\"code\":500,\"message\":\"disk on fire\"}"));
    assertThatThrownBy(() -> v.exists("/x")).as("could not look is not absent")
        .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(500))
        .isNotInstanceOf(VolumePathNotFoundException.class);

    answers.put("DELETE /volumecontent/vol1/path", new Answer(401, "{\"code\":401,\"message\":\"bad token " + TOKEN + "\"}"));
    assertThatThrownBy(() -> v.remove("/x")).isInstanceOfSatisfying(VolumeAuthenticationException.class, e -> {
      assertThat(e).isInstanceOf(SandboxAuthenticationException.class);
      assertThat(e.statusCode()).isEqualTo(401);
      assertThat(e.getMessage()).contains("volume's token").doesNotContain(TOKEN).doesNotContain("API key");
    });

    answers.put("GET /volumes/nope", new Answer(404, "{\"code\":404,\"message\":\"volume not found\"}"));
    assertThatThrownBy(() -> provider.api().volumes().connect("nope"))
        .isInstanceOfSatisfying(VolumeNotFoundException.class, e -> assertThat(e.volumeId()).isEqualTo("nope"));
    assertThat(seen.stream().filter(r -> r.path().startsWith("/volumecontent")).map(r -> r.headers().containsKey("X-API-KEY")))
        .containsOnly(false);
  }

  @Test
  @DisplayName("content goes to the domain the control plane names for the volume, else to the provider's API URL")
  void contentUrl() {
    Volume plain = provider.api().volumes().connect("vol1");
    if (System.getenv(E2BVolumes.VOLUME_API_URL_ENV) == null) {
      assertThat(plain.contentUrl()).isEqualTo(url);
    }
    answers.put("GET /volumes/vol2", new Answer(200, "{\"volumeID\":\"vol2\",\"name\":\"b\",\"token\":\"" + TOKEN
        + "\",\"domain\":\"byoc.example.com\"}"));
    Volume byoc = provider.api().volumes().connect("vol2");
    assertThat(byoc.domain()).isEqualTo("byoc.example.com");
    if (System.getenv(E2BVolumes.VOLUME_API_URL_ENV) == null) {
      assertThat(byoc.contentUrl()).isEqualTo(URI.create("https://api.byoc.example.com"));
    }
    assertThat(provider.api().volumes().withContentUrl(URI.create("http://127.0.0.1:9/v")).connect("vol2").contentUrl())
        .isEqualTo(URI.create("http://127.0.0.1:9/v"));
    answers.put("GET /volumes/vol3", new Answer(200, "{\"volumeID\":\"vol3\",\"name\":\"c\",\"token\":\"" + TOKEN
        + "\",\"domain\":\"evil.example.com/x@y\"}"));
    assertThatThrownBy(() -> provider.api().volumes().connect("vol3")).hasMessageContaining("will not use");
  }

  private static final int MIB = 1 << 20;

  @Test
  @DisplayName("a streamed read hands over the first MiB while the server has not sent the rest; 64 MiB pass through a small buffer")
  void streamedReadIsBounded() throws Exception {
    CountDownLatch firstRead = new CountDownLatch(1);
    AtomicLong sent = new AtomicLong();
    server.route("/volumecontent/vol1/file", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, 0);
      byte[] chunk = new byte[MIB];
      try (OutputStream out = ex.getResponseBody()) {
        sent.addAndGet(MIB);
        out.write(chunk);
        out.flush();
        if (!firstRead.await(60, TimeUnit.SECONDS)) {
          return;
        }
        for (int i = 1; i < 64; i++) {
          sent.addAndGet(MIB);
          out.write(chunk);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    Volume v = connect();
    CompletableFuture<Long> total = CompletableFuture.supplyAsync(() -> {
      try (InputStream in = v.readStream("/big")) {
        byte[] buf = new byte[8192];
        long n = 0;
        while (n < MIB) {
          int r = in.read(buf);
          if (r < 0) {
            return n;
          }
          n += r;
        }
        assertThat(sent.get()).as("the server has sent only the first MiB").isEqualTo(MIB);
        firstRead.countDown();
        for (int r; (r = in.read(buf)) >= 0; ) {
          n += r;
        }
        return n;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    }, threads);
    assertThat(total.get(60, TimeUnit.SECONDS)).isEqualTo(64L * MIB);
  }

  @Test
  @DisplayName("a streamed write is sent chunked as it is read: the server gets its first bytes long before the source has given 64 MiB")
  void streamedWriteIsBounded() throws Exception {
    long total = 64L * MIB;
    AtomicLong given = new AtomicLong();
    AtomicLong givenAtFirstByte = new AtomicLong(-1);
    AtomicLong received = new AtomicLong();
    List<String> encoding = new CopyOnWriteArrayList<>();
    server.route("/volumecontent/vol1/file", ex -> {
      encoding.add(String.valueOf(ex.getRequestHeaders().getFirst("Transfer-Encoding")));
      byte[] buf = new byte[64 * 1024];
      try (InputStream in = ex.getRequestBody()) {
        for (int r; (r = in.read(buf)) >= 0; ) {
          if (received.getAndAdd(r) == 0 && r > 0) {
            givenAtFirstByte.set(given.get());
          }
        }
      }
      byte[] body = stat("/big", "file", received.get(), "").getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(201, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    Volume v = connect();
    InputStream source = new InputStream() {
      @Override
      public int read() {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        long left = total - given.get();
        if (left <= 0) {
          return -1;
        }
        int n = (int) Math.min(len, left);
        given.addAndGet(n);
        return n;
      }
    };
    VolumeEntry written = CompletableFuture.supplyAsync(() -> v.writeFile("/big", source, VolumeWriteOptions.DEFAULTS), threads)
        .get(120, TimeUnit.SECONDS);
    assertThat(written.size()).isEqualTo(total);
    assertThat(received.get()).isEqualTo(total);
    assertThat(givenAtFirstByte.get()).as("bytes the source had given when the server read its first; buffered whole, all 64 MiB")
        .isBetween(1L, total / 2);
    assertThat(encoding).containsExactly("chunked");
  }
}
