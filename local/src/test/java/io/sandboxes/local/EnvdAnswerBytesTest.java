package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Connect;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The exact bytes of envd's answers that carry file entries and stream events, read over real
 * HTTP from a real sandbox: field order, which fields are left out, numbers against texts. Only
 * a modification time (and a pid) is read from the answer itself.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EnvdAnswerBytesTest {
  private static final String DIR = "/home/user/pin";
  private static final Pattern TIME = Pattern.compile("\"modifiedTime\":\"([^\"]+)\"");

  private EnvdHttp envd;
  private LocalServer server;
  private LiveSandbox sandbox;
  private String token;
  private HttpClient http;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) throws Exception {
    this.envd = EnvdHttp.open(e2b, server);
    this.server = server;
    this.sandbox = envd.sandbox;
    this.token = envd.token;
    this.http = envd.http;
    String setup = "set -e; mkdir -p " + DIR + "/d " + DIR + "/empty " + DIR + "/w; cd " + DIR
        + "; printf hello > f.txt; chmod 640 f.txt; printf 1234567 > d/in.txt; chmod 600 d/in.txt; chmod 750 d empty w"
        + "; ln -s f.txt link; ln -s nowhere broken; printf x > moved.txt; chmod 644 moved.txt";
    assertThat(sandbox.exec(setup).exitCode()).isZero();
  }

  @AfterAll
  void stop() {
    if (envd != null) {
      envd.close();
    }
  }

  private String unary(String call, String body) throws Exception {
    return envd.unary("/" + call, body);
  }

  /** A streaming call read on another thread: each message's JSON as it comes, the end message as {@code END json}. */
  private List<String> stream(String call, String body, String... headers) {
    List<String> messages = new CopyOnWriteArrayList<>();
    HttpRequest.Builder r = envd.stream("/" + call, body);
    for (int i = 0; i < headers.length; i += 2) {
      r.header(headers[i], headers[i + 1]);
    }
    CompletableFuture<HttpResponse<InputStream>> f = http.sendAsync(r.build(), HttpResponse.BodyHandlers.ofInputStream());
    Thread.ofVirtual().start(() -> {
      try (InputStream in = f.join().body()) {
        Connect.Envelope env;
        while ((env = Connect.read(in)) != null) {
          String text = new String(env.payload(), StandardCharsets.UTF_8);
          messages.add(env.endStream() ? "END " + text : text);
        }
      } catch (Exception e) {
        messages.add("BROKEN " + e);
      }
    });
    return messages;
  }

  private static boolean ended(List<String> messages) {
    return !messages.isEmpty() && (messages.getLast().startsWith("END ") || messages.getLast().startsWith("BROKEN "));
  }

  private static String time(String answer) {
    Matcher m = TIME.matcher(answer);
    assertThat(m.find()).as(answer).isTrue();
    return m.group(1);
  }

  private static String entry(String name, String type, String path, String size, int mode, String permissions, String time,
      String rest) {
    return "{\"name\":\"" + name + "\",\"type\":\"" + type + "\",\"path\":\"" + path + "\",\"size\":\"" + size + "\",\"mode\":" + mode
        + ",\"permissions\":\"" + permissions + "\",\"owner\":\"user\",\"group\":\"user\",\"modifiedTime\":\"" + time + "\"" + rest + "}";
  }

  @Test
  @DisplayName("Stat, ListDir, MakeDir and Move answer entries byte for byte as before; an upload's answer too")
  void entries() throws Exception {
    SoftAssertions soft = new SoftAssertions();
    String f = unary("filesystem.Filesystem/Stat", "{\"path\":\"" + DIR + "/f.txt\"}");
    soft.assertThat(f).isEqualTo("200 {\"entry\":" + entry("f.txt", "FILE_TYPE_FILE", DIR + "/f.txt", "5", 416, "-rw-r-----", time(f), "") + "}");
    String link = unary("filesystem.Filesystem/Stat", "{\"path\":\"" + DIR + "/link\"}");
    soft.assertThat(link).isEqualTo("200 {\"entry\":" + entry("link", "FILE_TYPE_FILE", DIR + "/link", "5", 511, "Lrwxrwxrwx", time(link),
        ",\"symlinkTarget\":\"" + DIR + "/f.txt\"") + "}");
    String broken = unary("filesystem.Filesystem/Stat", "{\"path\":\"" + DIR + "/broken\"}");
    soft.assertThat(broken).isEqualTo("200 {\"entry\":" + entry("broken", "FILE_TYPE_UNSPECIFIED", DIR + "/broken", "7", 511, "Lrwxrwxrwx",
        time(broken), ",\"symlinkTarget\":\"" + DIR + "/nowhere\"") + "}");
    String root = unary("filesystem.Filesystem/Stat", "{\"path\":\"/\"}");
    soft.assertThat(root).startsWith("200 {\"entry\":{\"name\":\"/\",\"type\":\"FILE_TYPE_DIRECTORY\",\"path\":\"/\",\"size\":\"")
        .endsWith("\",\"modifiedTime\":\"" + time(root) + "\"}}");

    String list = unary("filesystem.Filesystem/ListDir", "{\"path\":\"" + DIR + "/d\"}");
    soft.assertThat(list).isEqualTo("200 {\"entries\":[" + entry("in.txt", "FILE_TYPE_FILE", DIR + "/d/in.txt", "7", 384, "-rw-------",
        time(list), "") + "]}");
    soft.assertThat(unary("filesystem.Filesystem/ListDir", "{\"path\":\"" + DIR + "/empty\",\"depth\":2}")).isEqualTo("200 {\"entries\":[]}");

    String made = unary("filesystem.Filesystem/MakeDir", "{\"path\":\"" + DIR + "/made\"}");
    soft.assertThat(made).startsWith("200 {\"entry\":{\"name\":\"made\",\"type\":\"FILE_TYPE_DIRECTORY\",\"path\":\"" + DIR + "/made\",\"size\":\"")
        .endsWith("\",\"mode\":493,\"permissions\":\"drwxr-xr-x\",\"owner\":\"user\",\"group\":\"user\",\"modifiedTime\":\"" + time(made) + "\"}}");
    String moved = unary("filesystem.Filesystem/Move", "{\"source\":\"" + DIR + "/moved.txt\",\"destination\":\"" + DIR + "/d/x/moved.txt\"}");
    soft.assertThat(moved).isEqualTo("200 {\"entry\":" + entry("moved.txt", "FILE_TYPE_FILE", DIR + "/d/x/moved.txt", "1", 420, "-rw-r--r--",
        time(moved), "") + "}");

    HttpResponse<String> up = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/files?path=" + DIR + "/m.txt&username=user"))
        .header("E2b-Sandbox-Id", sandbox.id()).header("X-Access-Token", token).header("Content-Type", "application/octet-stream")
        .header("x-metadata-b", "2").header("x-metadata-a", "1").POST(HttpRequest.BodyPublishers.ofString("meta")).build(),
        HttpResponse.BodyHandlers.ofString());
    soft.assertThat(up.statusCode() + " " + up.body())
        .isEqualTo("200 [{\"path\":\"" + DIR + "/m.txt\",\"name\":\"m.txt\",\"type\":\"file\",\"metadata\":{\"a\":\"1\",\"b\":\"2\"}}]");
    String m = unary("filesystem.Filesystem/Stat", "{\"path\":\"" + DIR + "/m.txt\"}");
    soft.assertThat(m).startsWith("200 {\"entry\":{\"name\":\"m.txt\",\"type\":\"FILE_TYPE_FILE\",\"path\":\"" + DIR + "/m.txt\",\"size\":\"4\",\"mode\":")
        .endsWith(",\"owner\":\"user\",\"group\":\"user\",\"modifiedTime\":\"" + time(m) + "\",\"metadata\":{\"a\":\"1\",\"b\":\"2\"}}}");

    // the errors: a unary call's, and one of the REST routes'
    soft.assertThat(unary("filesystem.Filesystem/Stat", "{\"path\":\"" + DIR + "/nope\"}"))
        .isEqualTo("404 {\"code\":\"not_found\",\"message\":\"path '" + DIR + "/nope' does not exist\"}");
    HttpResponse<String> noPath = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/files?username=user"))
        .header("E2b-Sandbox-Id", sandbox.id()).header("X-Access-Token", token).GET().build(), HttpResponse.BodyHandlers.ofString());
    soft.assertThat(noPath.statusCode() + " " + noPath.body())
        .isEqualTo("400 {\"code\":400,\"message\":\"the 'path' query parameter is required\"}");
    soft.assertAll();
  }

  @Test
  @DisplayName("WatchDir's messages: its start, an event with its entry, a keepalive, and its ends (deadline, refused)")
  void watchMessages() throws Exception {
    SoftAssertions soft = new SoftAssertions();
    List<String> watch = stream("filesystem.Filesystem/WatchDir", "{\"path\":\"" + DIR + "/w\",\"includeEntry\":true}",
        Connect.KEEPALIVE_HEADER, "1", Connect.TIMEOUT_HEADER, "8000");
    await().atMost(Duration.ofSeconds(20)).until(() -> !watch.isEmpty());
    soft.assertThat(watch.getFirst()).isEqualTo("{\"start\":{}}");
    soft.assertThat(sandbox.exec("mkdir " + DIR + "/w/sub && chmod 700 " + DIR + "/w/sub").exitCode()).isZero();
    await().atMost(Duration.ofSeconds(20)).until(() -> watch.contains("{\"keepalive\":{}}")
        && watch.stream().anyMatch(s -> s.startsWith("{\"filesystem\":{\"name\":\"sub\",\"type\":\"EVENT_TYPE_CREATE\"")));
    String created = watch.stream().filter(s -> s.contains("EVENT_TYPE_CREATE")).findFirst().orElseThrow();
    soft.assertThat(created).startsWith("{\"filesystem\":{\"name\":\"sub\",\"type\":\"EVENT_TYPE_CREATE\",\"entry\":{\"name\":\"sub\","
        + "\"type\":\"FILE_TYPE_DIRECTORY\",\"path\":\"" + DIR + "/w/sub\",\"size\":\"")
        .endsWith(",\"owner\":\"user\",\"group\":\"user\",\"modifiedTime\":\"" + time(created) + "\"}}}");
    await().atMost(Duration.ofSeconds(30)).until(() -> ended(watch));
    soft.assertThat(watch.getLast())
        .isEqualTo("END {\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"the watch reached its deadline\"}}");

    List<String> timed = stream("filesystem.Filesystem/WatchDir", "{\"path\":\"" + DIR + "/d\"}", Connect.TIMEOUT_HEADER, "1500");
    await().atMost(Duration.ofSeconds(20)).until(() -> ended(timed));
    soft.assertThat(timed).containsExactly("{\"start\":{}}",
        "END {\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"the watch reached its deadline\"}}");

    List<String> refused = stream("filesystem.Filesystem/WatchDir", "{\"path\":\"" + DIR + "/f.txt\"}");
    await().atMost(Duration.ofSeconds(20)).until(() -> ended(refused));
    soft.assertThat(refused).containsExactly(
        "END {\"error\":{\"code\":\"invalid_argument\",\"message\":\"path '" + DIR + "/f.txt' is not a directory\"}}");
    soft.assertAll();
  }

  @Test
  @DisplayName("a process's answer goes out a message to a write (an HTTP chunk each), its end event, the stream's end and the body's end in one")
  void processAnswerWrites() throws Exception {
    List<List<String>> chunks = answerChunks("printf hi");
    assertThat(chunks).hasSize(3);
    assertThat(chunks.get(0)).singleElement().asString().matches("\\{\"event\":\\{\"start\":\\{\"pid\":[1-9][0-9]*}}}");
    assertThat(chunks.get(1)).containsExactly("{\"event\":{\"data\":{\"stdout\":\"aGk=\"}}}");
    assertThat(chunks.get(2)).containsExactly("{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}", "END {}");
  }

  @Test
  @DisplayName("a large output goes in data messages of at most 32 KiB of it each, several to a write, whole and in order")
  void largeOutputMessages() throws Exception {
    int size = 3_000_000;
    List<List<String>> chunks = answerChunks("yes 0123456789abcdef | head -c " + size);
    Pattern data = Pattern.compile("\\{\"event\":\\{\"data\":\\{\"stdout\":\"([A-Za-z0-9+/=]*)\"}}}");
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    int largest = 0;
    int mostInOneWrite = 0;
    for (List<String> chunk : chunks) {
      int inThisWrite = 0;
      for (String message : chunk) {
        Matcher m = data.matcher(message);
        if (m.matches()) {
          byte[] bytes = java.util.Base64.getDecoder().decode(m.group(1));
          largest = Math.max(largest, bytes.length);
          out.writeBytes(bytes);
          inThisWrite++;
        }
      }
      mostInOneWrite = Math.max(mostInOneWrite, inThisWrite);
    }
    assertThat(out.size()).isEqualTo(size);
    assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo("0123456789abcdef\n".repeat(size / 17 + 1).substring(0, size));
    assertThat(largest).as("the most output one message carries").isLessThanOrEqualTo(32 * 1024);
    assertThat(mostInOneWrite).as("a chunk of the daemon's larger than a message goes in one write").isGreaterThan(1);
  }

  /**
   * Runs {@code command} by {@code process.Process/Start} over a socket of its own and reads the
   * answer as the server wrote it: its HTTP chunks (one to a write of the server's), each as the
   * Connect messages in it ({@code END } before the stream's end message).
   */
  private List<List<String>> answerChunks(String command) throws Exception {
    byte[] body = Connect.envelope(0, ("{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"" + command + "\"]}}")
        .getBytes(StandardCharsets.UTF_8));
    java.net.URI url = server.sandboxUrl();
    try (java.net.Socket socket = new java.net.Socket(url.getHost(), url.getPort())) {
      socket.setSoTimeout(20_000);
      String head = "POST /process.Process/Start HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort() + "\r\n"
          + "Content-Type: application/connect+json\r\nConnect-Protocol-Version: 1\r\nE2b-Sandbox-Id: " + sandbox.id()
          + "\r\nX-Access-Token: " + token + "\r\nContent-Length: " + body.length + "\r\n\r\n";
      java.io.OutputStream out = socket.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
      assertThat(line(in)).isEqualTo("HTTP/1.1 200 OK");
      boolean chunked = false;
      for (String h = line(in); !h.isEmpty(); h = line(in)) {
        chunked |= h.equalsIgnoreCase("Transfer-Encoding: chunked");
      }
      assertThat(chunked).isTrue();
      // each chunk is one write of the server's: what its messages were split or joined into
      List<List<String>> chunks = new java.util.ArrayList<>();
      for (int size = Integer.parseInt(line(in), 16); size > 0; size = Integer.parseInt(line(in), 16)) {
        byte[] chunk = new byte[size];
        in.readFully(chunk);
        assertThat(line(in)).isEmpty();
        List<String> messages = new java.util.ArrayList<>();
        java.io.InputStream c = new java.io.ByteArrayInputStream(chunk);
        for (Connect.Envelope env = Connect.read(c); env != null; env = Connect.read(c)) {
          messages.add((env.endStream() ? "END " : "") + new String(env.payload(), StandardCharsets.UTF_8));
        }
        chunks.add(messages);
      }
      assertThat(line(in)).as("no trailers after the last chunk").isEmpty();
      return chunks;
    }
  }

  private static String line(java.io.DataInputStream in) throws java.io.IOException {
    StringBuilder b = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new java.io.EOFException("the answer ended inside a line: " + b);
      }
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }

  @Test
  @DisplayName("a process's events: its start, keepalives, its end with the exit code only when not 0, then {}; a start refused")
  void processEvents() throws Exception {
    SoftAssertions soft = new SoftAssertions();
    List<String> three = stream("process.Process/Start", "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"sleep 2; exit 3\"]}}",
        Connect.KEEPALIVE_HEADER, "1");
    await().atMost(Duration.ofSeconds(30)).until(() -> ended(three));
    soft.assertThat(three.getFirst()).matches("\\{\"event\":\\{\"start\":\\{\"pid\":[1-9][0-9]*}}}");
    soft.assertThat(three.subList(1, three.size() - 2)).isNotEmpty().allMatch("{\"event\":{\"keepalive\":{}}}"::equals);
    soft.assertThat(three.subList(three.size() - 2, three.size())).containsExactly(
        "{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true,\"status\":\"exit status 3\",\"error\":\"exit status 3\"}}}", "END {}");

    List<String> zero = stream("process.Process/Start", "{\"process\":{\"cmd\":\"/bin/true\"}}");
    await().atMost(Duration.ofSeconds(30)).until(() -> ended(zero));
    soft.assertThat(zero.subList(1, zero.size())).containsExactly("{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}", "END {}");

    List<String> killed = stream("process.Process/Start", "{\"process\":{\"cmd\":\"/bin/sleep\",\"args\":[\"60\"]},\"tag\":\"pin-sleep\"}");
    await().atMost(Duration.ofSeconds(30)).until(() -> !killed.isEmpty());
    soft.assertThat(unary("process.Process/SendSignal", "{\"process\":{\"tag\":\"pin-sleep\"},\"signal\":\"SIGNAL_SIGKILL\"}")).isEqualTo("200 {}");
    await().atMost(Duration.ofSeconds(30)).until(() -> ended(killed));
    soft.assertThat(killed.subList(1, killed.size())).containsExactly(
        "{\"event\":{\"end\":{\"exitCode\":-1,\"status\":\"signal: killed\",\"error\":\"signal: killed\"}}}", "END {}");

    List<String> missing = stream("process.Process/Start", "{\"process\":{\"cmd\":\"/no/such/program\"}}");
    await().atMost(Duration.ofSeconds(30)).until(() -> ended(missing));
    soft.assertThat(missing).containsExactly("END {\"error\":{\"code\":\"not_found\",\"message\":\"the process could not be started:"
        + " could not run /no/such/program: No such file or directory\"}}");
    soft.assertAll();
  }
}
