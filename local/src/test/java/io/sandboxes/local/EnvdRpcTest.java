package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * envd's process and filesystem RPCs on the local server, spoken at the protocol level exactly as
 * the official SDKs send them (Connect-JSON, enveloped streams, Basic user header).
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EnvdRpcTest {
  private LiveSandbox sandbox;
  private Http http;
  private Envd envd;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) throws Exception {
    sandbox = e2b.create();
    http = new Http(Duration.ofSeconds(30));
    envd = new Envd(http, server.sandboxUrl(), sandbox.id(), Tokens.envdToken(server, sandbox.id()));
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
    if (http != null) {
      http.close();
    }
  }

  private static ObjectNode startRequest(String command, boolean stdin, String tag) {
    ObjectNode req = Json.object();
    ObjectNode process = req.putObject("process").put("cmd", "/bin/bash");
    process.putArray("args").add("-l").add("-c").add(command);
    req.put("stdin", stdin);
    if (tag != null) {
      req.put("tag", tag);
    }
    return req;
  }

  private static ObjectNode byPid(int pid) {
    ObjectNode req = Json.object();
    req.putObject("process").put("pid", pid);
    return req;
  }

  /** Reads events until the end event; returns [stdout, end]. */
  private static Object[] drain(ConnectStream stream) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JsonNode end = null;
    JsonNode msg;
    while ((msg = stream.next()) != null) {
      JsonNode ev = msg.path("event");
      if (ev.has("data") && ev.get("data").has("stdout")) {
        out.writeBytes(Base64.getDecoder().decode(ev.get("data").get("stdout").asText()));
      }
      if (ev.has("end")) {
        end = ev.get("end");
      }
    }
    return new Object[] {out.toString(StandardCharsets.UTF_8), end};
  }

  @Test
  @DisplayName("Start with stdin, SendInput, CloseStdin: cat echoes the input and exits 0 at EOF")
  void stdinRoundTrip() {
    try (ConnectStream stream = envd.stream("process.Process/Start", startRequest("cat", true, null), null, Duration.ofSeconds(30), "start", null)) {
      JsonNode first = stream.next();
      int pid = first.path("event").path("start").path("pid").asInt();
      assertThat(pid).isPositive();
      ObjectNode input = byPid(pid);
      input.putObject("input").put("stdin", Base64.getEncoder().encodeToString("piped line\n".getBytes(StandardCharsets.UTF_8)));
      envd.unary("process.Process/SendInput", input, null, "send input");
      envd.unary("process.Process/CloseStdin", byPid(pid), null, "close stdin");
      Object[] result = drain(stream);
      assertThat(result[0]).isEqualTo("piped line\n");
      JsonNode end = (JsonNode) result[1];
      assertThat(end.path("exited").asBoolean()).isTrue();
      assertThat(end.has("exitCode")).isFalse();
      assertThat(end.path("status").asText()).isEqualTo("exit status 0");
    }
  }

  @Test
  @DisplayName("a started process outlives its stream; List shows it with its tag; Connect re-attaches; SIGKILL ends it as a signal")
  void listConnectSignal() {
    int pid;
    try (ConnectStream stream = envd.stream("process.Process/Start",
        startRequest("while true; do echo tick; sleep 0.2; done", false, "ticker"), null, Duration.ofSeconds(60), "start", null)) {
      pid = stream.next().path("event").path("start").path("pid").asInt();
    }
    JsonNode list = envd.unary("process.Process/List", Json.object(), null, "list");
    List<JsonNode> procs = new ArrayList<>();
    list.path("processes").forEach(procs::add);
    assertThat(procs).anySatisfy(p -> {
      assertThat(p.path("pid").asInt()).isEqualTo(pid);
      assertThat(p.path("tag").asText()).isEqualTo("ticker");
      assertThat(p.path("config").path("cmd").asText()).isEqualTo("/bin/bash");
    });
    try (ConnectStream attached = envd.stream("process.Process/Connect", byPid(pid), null, Duration.ofSeconds(30), "connect", null)) {
      assertThat(attached.next().path("event").path("start").path("pid").asInt()).isEqualTo(pid);
      JsonNode data = attached.next();
      while (data.path("event").has("keepalive")) {
        data = attached.next();
      }
      assertThat(new String(Base64.getDecoder().decode(data.path("event").path("data").path("stdout").asText()), StandardCharsets.UTF_8))
          .contains("tick");
      ObjectNode kill = byPid(pid);
      kill.put("signal", "SIGNAL_SIGKILL");
      envd.unary("process.Process/SendSignal", kill, null, "kill");
      JsonNode end = (JsonNode) drain(attached)[1];
      assertThat(end.path("exitCode").asInt()).isEqualTo(-1);
      assertThat(end.path("status").asText()).isEqualTo("signal: killed");
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> StreamSupport.stream(
        envd.unary("process.Process/List", Json.object(), null, "list").path("processes").spliterator(), false)
        .noneMatch(p -> p.path("pid").asInt() == pid));
  }

  @Test
  @DisplayName("a PTY is a real terminal: input bytes, its size and a resize seen by stty, Ctrl-C interrupts the foreground job")
  void pty() throws Exception {
    ObjectNode req = Json.object();
    ObjectNode process = req.putObject("process").put("cmd", "/bin/bash");
    process.putArray("args").add("-i").add("-l");
    process.putObject("envs").put("TERM", "xterm-256color").put("LANG", "C.UTF-8");
    req.putObject("pty").putObject("size").put("cols", 80).put("rows", 24);
    StringBuffer screen = new StringBuffer();
    JsonNode[] end = new JsonNode[1];
    try (ConnectStream stream = envd.stream("process.Process/Start", req, null, Duration.ofSeconds(60), "pty", null)) {
      int pid = stream.next().path("event").path("start").path("pid").asInt();
      Thread reader = Thread.ofVirtual().start(() -> {
        JsonNode msg;
        while ((msg = stream.next()) != null) {
          JsonNode ev = msg.path("event");
          if (ev.has("data")) {
            screen.append(new String(Base64.getDecoder().decode(ev.get("data").path("pty").asText()), StandardCharsets.UTF_8));
          }
          if (ev.has("end")) {
            end[0] = ev.get("end");
          }
        }
      });
      java.util.function.Consumer<String> type = text -> {
        ObjectNode input = byPid(pid);
        input.putObject("input").put("pty", Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8)));
        envd.unary("process.Process/SendInput", input, null, "pty input");
      };
      type.accept("stty size; echo marker-$((6*7))\n");
      await().atMost(Duration.ofSeconds(20)).until(() -> screen.toString().contains("marker-42"));
      assertThat(screen.toString()).contains("24 80");

      ObjectNode resize = byPid(pid);
      resize.putObject("pty").putObject("size").put("cols", 100).put("rows", 30);
      envd.unary("process.Process/Update", resize, null, "resize");
      type.accept("stty size\n");
      await().atMost(Duration.ofSeconds(20)).until(() -> screen.toString().contains("30 100"));

      type.accept("sleep 300; echo not-interrupted\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.exec("pgrep -fx 'sleep 300' >/dev/null && echo yes || echo no")
          .stdout().strip().equals("yes"));
      type.accept("\u0003");
      type.accept("echo after-$((1+1))-interrupt\n");
      await().atMost(Duration.ofSeconds(20)).until(() -> screen.toString().contains("after-2-interrupt"));
      // the terminal echoes the typed line once; an uninterrupted sleep would have printed it again
      assertThat(screen.toString().split("not-interrupted", -1)).hasSize(2);

      type.accept("exit 5\n");
      reader.join(Duration.ofSeconds(20));
      assertThat(end[0]).isNotNull();
      assertThat(end[0].path("exitCode").asInt()).isEqualTo(5);
    }
  }

  @Test
  @DisplayName("a finished process's end is kept: a late Connect by pid still gets start and end")
  void lateConnect() {
    int pid;
    try (ConnectStream stream = envd.stream("process.Process/Start", startRequest("exit 4", false, null), null, Duration.ofSeconds(30), "start", null)) {
      pid = stream.next().path("event").path("start").path("pid").asInt();
      assertThat(((JsonNode) drain(stream)[1]).path("exitCode").asInt()).isEqualTo(4);
    }
    try (ConnectStream late = envd.stream("process.Process/Connect", byPid(pid), null, Duration.ofSeconds(30), "late connect", null)) {
      assertThat(late.next().path("event").path("start").path("pid").asInt()).isEqualTo(pid);
      JsonNode end = (JsonNode) drain(late)[1];
      assertThat(end.path("exitCode").asInt()).isEqualTo(4);
      assertThat(end.path("status").asText()).isEqualTo("exit status 4");
    }
  }

  @Test
  @DisplayName("a process lives until its Connect-Timeout-Ms deadline even when its client has gone, then it is killed")
  void deadlineWithoutClient() {
    int pid;
    try (ConnectStream stream = envd.stream("process.Process/Start", startRequest("sleep 600", false, "deadline"), null,
        Duration.ofMillis(2500), "start", null)) {
      pid = stream.next().path("event").path("start").path("pid").asInt();
    }
    assertThat(StreamSupport.stream(envd.unary("process.Process/List", Json.object(), null, "list").path("processes").spliterator(), false)
        .anyMatch(p -> p.path("pid").asInt() == pid)).isTrue();
    await().atMost(Duration.ofSeconds(20)).until(() -> StreamSupport.stream(
        envd.unary("process.Process/List", Json.object(), null, "list").path("processes").spliterator(), false)
        .noneMatch(p -> p.path("pid").asInt() == pid));
    try (ConnectStream late = envd.stream("process.Process/Connect", byPid(pid), null, Duration.ofSeconds(30), "late connect", null)) {
      late.next();
      assertThat(((JsonNode) drain(late)[1]).path("status").asText()).isEqualTo("signal: killed");
    }
  }

  @Test
  @DisplayName("a quiet stream gets keepalive events at the client's Keepalive-Ping-Interval")
  void keepalive(LocalServer server) throws Exception {
    // quiet for 10 s at a 1 s interval: nine keepalives are due; asking for three leaves room for
    // a loaded machine that stalls the stream for a few seconds (a full local run once saw one in 5 s)
    ObjectNode body = startRequest("sleep 10; echo done", false, null);
    byte[] envelope = io.sandboxes.e2b.internal.Connect.envelope(0, Json.bytes(body));
    try (java.net.http.HttpClient raw = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1).build()) {
      java.net.http.HttpResponse<java.io.InputStream> r = raw.send(java.net.http.HttpRequest.newBuilder(
              server.sandboxUrl().resolve("/process.Process/Start"))
          .header("E2b-Sandbox-Id", sandbox.id())
          .header("X-Access-Token", Tokens.envdToken(server, sandbox.id()))
          .header("Content-Type", "application/connect+json")
          .header("Connect-Protocol-Version", "1")
          .header("Keepalive-Ping-Interval", "1")
          .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(envelope)).build(),
          java.net.http.HttpResponse.BodyHandlers.ofInputStream());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("content-type")).contains("application/connect+json");
      List<String> kinds = new ArrayList<>();
      try (java.io.InputStream in = r.body()) {
        io.sandboxes.e2b.internal.Connect.Envelope env;
        while ((env = io.sandboxes.e2b.internal.Connect.read(in)) != null) {
          if (env.endStream()) {
            kinds.add("eos " + new String(env.payload(), StandardCharsets.UTF_8));
            break;
          }
          kinds.add(Json.parse(env.payload()).path("event").fieldNames().next());
        }
      }
      assertThat(kinds.get(0)).isEqualTo("start");
      assertThat(kinds).filteredOn("keepalive"::equals).hasSizeGreaterThanOrEqualTo(3);
      assertThat(kinds.subList(kinds.size() - 2, kinds.size())).containsExactly("end", "eos {}");
    }
  }

  @Test
  @DisplayName("Connect and SendSignal to an unknown pid answer not_found")
  void unknownPid() {
    try (ConnectStream stream = envd.stream("process.Process/Connect", byPid(999_999), null, Duration.ofSeconds(10), "connect", null)) {
      assertThatThrownBy(stream::next).isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("not_found"));
    }
    ObjectNode kill = byPid(999_999);
    kill.put("signal", "SIGNAL_SIGKILL");
    assertThatThrownBy(() -> envd.unary("process.Process/SendSignal", kill, null, "kill"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("not_found"));
  }

  @Test
  @DisplayName("filesystem RPCs: MakeDir, already_exists, Stat, ListDir with depth, Move, Remove, not_found")
  void filesystem() {
    JsonNode made = envd.unary("filesystem.Filesystem/MakeDir", Json.object().put("path", "/home/user/fs/a/b"), null, "mkdir");
    assertThat(made.path("entry").path("type").asText()).isEqualTo("FILE_TYPE_DIRECTORY");
    assertThat(made.path("entry").path("path").asText()).isEqualTo("/home/user/fs/a/b");
    assertThatThrownBy(() -> envd.unary("filesystem.Filesystem/MakeDir", Json.object().put("path", "/home/user/fs/a"), null, "mkdir"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("already_exists"));
    sandbox.writeFile("/home/user/fs/a/file.txt", "12345678");
    sandbox.exec("ln -s /home/user/fs/a/file.txt /home/user/fs/link");

    JsonNode stat = envd.unary("filesystem.Filesystem/Stat", Json.object().put("path", "fs/a/file.txt"), null, "stat").path("entry");
    assertThat(stat.path("name").asText()).isEqualTo("file.txt");
    assertThat(stat.path("path").asText()).isEqualTo("/home/user/fs/a/file.txt");
    assertThat(stat.path("type").asText()).isEqualTo("FILE_TYPE_FILE");
    assertThat(stat.path("size").asText()).isEqualTo("8");
    assertThat(stat.path("mode").asInt()).isEqualTo(0644);
    assertThat(stat.path("permissions").asText()).isEqualTo("-rw-r--r--");
    assertThat(stat.path("owner").asText()).isEqualTo("user");
    assertThat(stat.path("modifiedTime").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");

    JsonNode link = envd.unary("filesystem.Filesystem/Stat", Json.object().put("path", "/home/user/fs/link"), null, "stat").path("entry");
    assertThat(link.path("type").asText()).isEqualTo("FILE_TYPE_FILE");
    assertThat(link.path("symlinkTarget").asText()).isEqualTo("/home/user/fs/a/file.txt");

    JsonNode shallow = envd.unary("filesystem.Filesystem/ListDir", Json.object().put("path", "/home/user/fs").put("depth", 1), null, "ls");
    assertThat(names(shallow)).containsExactlyInAnyOrder("/home/user/fs/a", "/home/user/fs/link");
    JsonNode deep = envd.unary("filesystem.Filesystem/ListDir", Json.object().put("path", "/home/user/fs").put("depth", 3), null, "ls");
    assertThat(names(deep)).contains("/home/user/fs/a/b", "/home/user/fs/a/file.txt");

    JsonNode moved = envd.unary("filesystem.Filesystem/Move",
        Json.object().put("source", "/home/user/fs/a/file.txt").put("destination", "/home/user/fs/moved.txt"), null, "mv");
    assertThat(moved.path("entry").path("path").asText()).isEqualTo("/home/user/fs/moved.txt");
    assertThat(sandbox.readFile("/home/user/fs/moved.txt")).isEqualTo("12345678");

    envd.unary("filesystem.Filesystem/Remove", Json.object().put("path", "/home/user/fs"), null, "rm");
    envd.unary("filesystem.Filesystem/Remove", Json.object().put("path", "/home/user/fs"), null, "rm again");
    assertThatThrownBy(() -> envd.unary("filesystem.Filesystem/Stat", Json.object().put("path", "/home/user/fs"), null, "stat"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("not_found"));
    assertThatThrownBy(() -> envd.unary("filesystem.Filesystem/ListDir", Json.object().put("path", "/etc/passwd"), null, "ls"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("invalid_argument"));
  }

  @Test
  @DisplayName("WatchDir streams start, then create/write/remove events named relative to the folder, recursively when asked")
  void watchDir() throws Exception {
    sandbox.exec("mkdir -p /home/user/watched/sub").orThrow();
    ObjectNode req = Json.object().put("path", "/home/user/watched").put("recursive", true).put("includeEntry", true);
    List<JsonNode> events = java.util.Collections.synchronizedList(new ArrayList<>());
    try (ConnectStream stream = envd.stream("filesystem.Filesystem/WatchDir", req, null, Duration.ofSeconds(60), "watch", null)) {
      assertThat(stream.next().has("start")).isTrue();
      Thread reader = Thread.ofVirtual().start(() -> {
        try {
          JsonNode msg;
          while ((msg = stream.next()) != null) {
            if (msg.has("filesystem")) {
              events.add(msg.get("filesystem"));
            }
          }
        } catch (RuntimeException closed) {
          // the test closes the stream
        }
      });
      sandbox.writeFile("/home/user/watched/a.txt", "one");
      sandbox.writeFile("/home/user/watched/sub/b.txt", "two");
      sandbox.exec("rm /home/user/watched/a.txt").orThrow();
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(List.copyOf(events))
          .anySatisfy(e -> assertEvent(e, "a.txt", "EVENT_TYPE_CREATE"))
          .anySatisfy(e -> assertEvent(e, "a.txt", "EVENT_TYPE_WRITE"))
          .anySatisfy(e -> assertEvent(e, "sub/b.txt", "EVENT_TYPE_CREATE"))
          .anySatisfy(e -> assertEvent(e, "a.txt", "EVENT_TYPE_REMOVE")));
      assertThat(List.copyOf(events)).filteredOn(e -> e.path("type").asText().equals("EVENT_TYPE_CREATE"))
          .anySatisfy(e -> assertThat(e.path("entry").path("path").asText()).startsWith("/home/user/watched/"));
      stream.close();
      reader.join(Duration.ofSeconds(10));
    }
    assertThatThrownBy(() -> {
      try (ConnectStream s = envd.stream("filesystem.Filesystem/WatchDir", Json.object().put("path", "/home/user/none"), null,
          Duration.ofSeconds(10), "watch", null)) {
        s.next();
      }
    }).isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("not_found"));
  }

  @Test
  @DisplayName("polling watchers: CreateWatcher, GetWatcherEvents drains what happened since, RemoveWatcher ends it")
  void pollingWatcher() {
    sandbox.exec("mkdir -p /home/user/polled").orThrow();
    String id = envd.unary("filesystem.Filesystem/CreateWatcher", Json.object().put("path", "/home/user/polled"), null, "create watcher")
        .path("watcherId").asText();
    assertThat(id).isNotEmpty();
    sandbox.writeFile("/home/user/polled/x.txt", "x");
    List<String> seen = new ArrayList<>();
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      envd.unary("filesystem.Filesystem/GetWatcherEvents", Json.object().put("watcherId", id), null, "events")
          .path("events").forEach(e -> seen.add(e.path("name").asText() + " " + e.path("type").asText()));
      assertThat(seen).contains("x.txt EVENT_TYPE_CREATE");
    });
    envd.unary("filesystem.Filesystem/RemoveWatcher", Json.object().put("watcherId", id), null, "remove");
    assertThatThrownBy(() -> envd.unary("filesystem.Filesystem/GetWatcherEvents", Json.object().put("watcherId", id), null, "events"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("not_found"));
  }

  private static void assertEvent(JsonNode e, String name, String type) {
    assertThat(e.path("name").asText()).isEqualTo(name);
    assertThat(e.path("type").asText()).isEqualTo(type);
  }

  @Test
  @DisplayName("the Basic user header picks the user: root may write where user may not")
  void userHeader() {
    assertThatThrownBy(() -> envd.unary("filesystem.Filesystem/MakeDir", Json.object().put("path", "/opt/owned"), null, "mkdir"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("permission_denied"));
    JsonNode made = envd.unary("filesystem.Filesystem/MakeDir", Json.object().put("path", "/opt/owned"), "root", "mkdir as root");
    assertThat(made.path("entry").path("owner").asText()).isEqualTo("root");
  }

  @Test
  @DisplayName("an RPC the local runtime does not serve answers unimplemented, not a silent success")
  void unimplemented() {
    assertThatThrownBy(() -> envd.unary("process.Process/StreamInput", Json.object(), null, "stream input"))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("unimplemented"));
  }

  private static List<String> names(JsonNode list) {
    List<String> out = new ArrayList<>();
    list.path("entries").forEach(e -> out.add(e.path("path").asText()));
    return out;
  }
}
