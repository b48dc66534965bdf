package io.sandboxes.examples.bench;

import io.sandboxes.local.LocalServer;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

/**
 * Measures what template builds busy with CPU-heavy work cost the server's other requests: the
 * latency of {@code GET /health} (median, 99th percentile, worst) on an idle server, then while
 * several builds at once each read a COPY archive that expands to many MiB (decompressed, and on
 * a server that checks uploads against their hashes, hashed). It speaks only the HTTP API, so the
 * same program measures any version of the server; the figure to compare is the ratio of the
 * loaded latency to the idle one (and how many requests got through meanwhile: a request held up
 * behind the builds shows in every figure of the loop). Not a test.
 *
 * <p>{@code bench.BuildLoadBench [builds=4] [mib=2048]}
 */
public final class BuildLoadBench {
  private BuildLoadBench() {}

  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  public static void main(String[] args) throws Exception {
    int builds = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    int mib = args.length > 1 ? Integer.parseInt(args[1]) : 2048;
    try (LocalServer server = LocalServer.builder().warmPool(0).build().start()) {
      URI api = server.apiUrl();
      String key = server.apiKey();
      for (int i = 0; i < 300; i++) {
        health(api); // warm-up
      }
      List<Double> idle = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        idle.add(health(api));
        Thread.sleep(5);
      }
      List<String[]> started = new ArrayList<>();
      for (int b = 0; b < builds; b++) {
        started.add(prepare(api, key, mib));
      }
      long t0 = System.nanoTime();
      for (String[] s : started) {
        send(api, key, "POST", "/v2/templates/" + s[0] + "/builds/" + s[1], s[2].getBytes(StandardCharsets.UTF_8));
      }
      List<Double> loaded = new ArrayList<>();
      List<Double> statusMs = new ArrayList<>();
      long lastCheck = 0;
      int done = 0;
      while (done < builds) {
        loaded.add(health(api));
        Thread.sleep(5);
        if (System.nanoTime() - lastCheck > 500_000_000L) {
          lastCheck = System.nanoTime();
          done = 0;
          for (String[] s : started) {
            long q = System.nanoTime();
            String status = send(api, key, "GET", "/templates/" + s[0] + "/builds/" + s[1] + "/status?limit=0", null);
            statusMs.add((System.nanoTime() - q) / 1e6);
            if (status.contains("\"status\":\"ready\"") || status.contains("\"status\":\"error\"")) {
              done++;
            }
          }
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      System.out.printf("%d builds, each a COPY archive expanding to %d MiB, done in %.1f s%n", builds, mib, seconds);
      System.out.printf("%-28s %8s %8s %8s %8s%n", "GET /health (ms)", "n", "p50", "p99", "max");
      print("idle", idle);
      print("while the builds run", loaded);
      System.out.printf("%-28s %8s %8s %8s %8s%n", "GET .../status (ms)", "n", "p50", "p99", "max");
      print("while the builds run", statusMs);
      System.out.printf("p99 ratio loaded/idle: %.1f; max ratio: %.1f%n", pct(loaded, 0.99) / pct(idle, 0.99),
          Collections.max(loaded) / Collections.max(idle));
      for (String[] s : started) {
        send(api, key, "DELETE", "/templates/" + s[3], null);
      }
    }
  }

  private static void print(String what, List<Double> ms) {
    System.out.printf("%-28s %8d %8.2f %8.2f %8.2f%n", what, ms.size(), pct(ms, 0.5), pct(ms, 0.99), Collections.max(ms));
  }

  private static double pct(List<Double> samples, double p) {
    List<Double> s = new ArrayList<>(samples);
    Collections.sort(s);
    return s.get((int) Math.min(s.size() - 1, Math.floor(p * s.size())));
  }

  private static double health(URI api) throws Exception {
    long t = System.nanoTime();
    HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(api.resolve("/health")).GET().build(), HttpResponse.BodyHandlers.discarding());
    if (r.statusCode() >= 300) {
      throw new IllegalStateException("GET /health answered " + r.statusCode());
    }
    return (System.nanoTime() - t) / 1e6;
  }

  private static String send(URI api, String key, String method, String path, byte[] body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(api.resolve(path)).header("X-API-KEY", key).timeout(Duration.ofMinutes(2))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() >= 300) {
      throw new IllegalStateException(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
    }
    return r.body();
  }

  /**
   * Requests a build, uploads its archive (small.txt, then {@code mib} MiB of zeros in 64 files)
   * under the files hash E2B's SDK gives it, and returns {template id, build id, start body, name}.
   */
  private static String[] prepare(URI api, String key, int mib) throws Exception {
    String name = "bench-load-" + UUID.randomUUID().toString().substring(0, 8);
    String requested = send(api, key, "POST", "/v3/templates", ("{\"name\":\"" + name + "\"}").getBytes(StandardCharsets.UTF_8));
    String templateId = field(requested, "templateID");
    String buildId = field(requested, "buildID");
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update("COPY small.txt /opt/small.txt".getBytes(StandardCharsets.UTF_8));
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GZIPOutputStream(raw, 64 * 1024))) {
      byte[] small = name.getBytes(StandardCharsets.UTF_8);
      entry(tar, sha, "small.txt", small, 1);
      byte[] zeros = new byte[1 << 20];
      int per = Math.max(1, mib / 64);
      for (int i = 0; i * per < mib; i++) {
        entry(tar, sha, "big/zeros-" + i, zeros, per);
      }
    }
    String hash = HexFormat.of().formatHex(sha.digest());
    String link = send(api, key, "GET", "/templates/" + templateId + "/files/" + hash, null);
    if (link.contains("\"url\"")) {
      String url = field(link, "url");
      HttpResponse<String> put = HTTP.send(HttpRequest.newBuilder(URI.create(url)).PUT(HttpRequest.BodyPublishers.ofByteArray(
          raw.toByteArray())).build(), HttpResponse.BodyHandlers.ofString());
      if (put.statusCode() != 200) {
        throw new IllegalStateException("upload answered " + put.statusCode() + ": " + put.body());
      }
    }
    String body = "{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"small.txt\",\"/opt/small.txt\",\"\",\"\"],"
        + "\"filesHash\":\"" + hash + "\"}]}";
    return new String[] {templateId, buildId, body, name};
  }

  /** Writes an entry of {@code times} copies of {@code data}, hashing it as E2B's SDK does (path, mode, size, content). */
  private static void entry(TarArchiveOutputStream tar, MessageDigest sha, String name, byte[] data, int times) throws Exception {
    long size = (long) data.length * times;
    TarArchiveEntry e = new TarArchiveEntry(name);
    e.setSize(size);
    e.setMode(0644);
    tar.putArchiveEntry(e);
    sha.update((name + 0100644 + size).getBytes(StandardCharsets.UTF_8));
    for (int i = 0; i < times; i++) {
      tar.write(data);
      sha.update(data);
    }
    tar.closeArchiveEntry();
  }

  private static String field(String json, String name) {
    int i = json.indexOf("\"" + name + "\"");
    int start = json.indexOf('"', json.indexOf(':', i) + 1) + 1;
    return json.substring(start, json.indexOf('"', start));
  }
}
