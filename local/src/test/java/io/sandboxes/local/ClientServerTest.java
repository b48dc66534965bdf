package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.CommandTimeoutException;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.SandboxInfo;
import io.sandboxes.e2b.SandboxPage;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.SandboxState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The E2B client against the local server, over real HTTP, with real containers: no mock on
 * either side.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientServerTest {
  private E2BApi e2b;
  private LocalServer server;
  private LiveSandbox sandbox;

  @BeforeAll
  void start(SharedServer.Running running) {
    this.e2b = running.provider().api();
    this.server = running.server();
    this.sandbox = e2b.create(SandboxSpec.defaults()
        .withEnv(Map.of("SANDBOX_LEVEL", "from-create"))
        .withMetadata(Map.of("suite", "client-server")));
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  @Test
  @DisplayName("a command runs in the sandbox and its output and exit code come back")
  void echoRoundTrip() {
    ExecResult r = sandbox.exec("echo hello from $(whoami) in $PWD");
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).isEqualTo("hello from user in /home/user\n");
    assertThat(r.stderr()).isEmpty();
  }

  @Test
  @DisplayName("a non-zero exit is data: code, stdout and stderr all arrive")
  void nonZeroExit() {
    ExecResult r = sandbox.exec("echo partial; echo boom >&2; exit 3");
    assertThat(r.exitCode()).isEqualTo(3);
    assertThat(r.stdout()).isEqualTo("partial\n");
    assertThat(r.stderr()).isEqualTo("boom\n");
    assertThat(r.error()).as("the daemon's words on the exit, as E2B's CommandResult.error").isEqualTo("exit status 3");
    assertThatThrownBy(r::orThrow).hasMessageContaining("exited with code 3").hasMessageContaining("boom");
    assertThat(sandbox.exec("true").error()).as("a clean exit has no error text").isNull();
  }

  @Test
  @DisplayName("stderr that Docker delivers ahead of stdout is never lost, however quick the command")
  void quickCommandsKeepBothStreams() {
    for (int i = 0; i < 15; i++) {
      ExecResult r = sandbox.exec("echo err" + i + " >&2; echo out" + i + "; exit 2");
      assertThat(r.exitCode()).isEqualTo(2);
      assertThat(r.stderr()).isEqualTo("err" + i + "\n");
      assertThat(r.stdout()).isEqualTo("out" + i + "\n");
    }
  }

  @Test
  @DisplayName("environment: sandbox-wide from create, per command, and the working directory")
  void envAndCwd() {
    ExecResult r = sandbox.exec("echo $SANDBOX_LEVEL $PER_CALL; pwd",
        ExecOptions.defaults().withEnv(Map.of("PER_CALL", "from-exec")).withCwd("/tmp"));
    assertThat(r.stdout()).isEqualTo("from-create from-exec\n/tmp\n");
  }

  @Test
  @DisplayName("a working directory that does not exist is refused as invalid")
  void missingCwd() {
    assertThatThrownBy(() -> sandbox.exec("true", ExecOptions.defaults().withCwd("/no/such/dir")))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("invalid_argument"));
  }

  @Test
  @DisplayName("commands run as the default user, or as root when asked")
  void users() {
    assertThat(sandbox.exec("id -u").stdout()).isEqualTo("1000\n");
    assertThat(sandbox.exec("id -u", ExecOptions.defaults().withUser("root")).stdout()).isEqualTo("0\n");
    assertThatThrownBy(() -> sandbox.exec("id", ExecOptions.defaults().withUser("nosuchuser")))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("unauthenticated"));
  }

  @Test
  @DisplayName("text files written through envd are read back, in a new parent directory")
  void textFiles() {
    sandbox.writeFile("/home/user/work/deep/hello.py", "print('héllo, wörld')\n");
    assertThat(sandbox.readFile("/home/user/work/deep/hello.py")).isEqualTo("print('héllo, wörld')\n");
    ExecResult r = sandbox.exec("python3 work/deep/hello.py && stat -c %U work/deep/hello.py");
    assertThat(r.stdout()).isEqualTo("héllo, wörld\nuser\n");
  }

  @Test
  @DisplayName("binary files keep their exact bytes both ways")
  void binaryRoundTrip() {
    byte[] data = new byte[1_500_000];
    new Random(42).nextBytes(data);
    for (int i = 0; i < 256; i++) {
      data[i] = (byte) i;
    }
    sandbox.writeBytes("/tmp/blob.bin", data);
    assertThat(sandbox.readBytes("/tmp/blob.bin")).isEqualTo(data);
    assertThat(sandbox.exec("sha256sum /tmp/blob.bin | cut -c1-64").stdout().strip())
        .isEqualTo(sha256(data));
    byte[] fromSandbox = sandbox.exec("head -c 300000 /dev/urandom > /tmp/made.bin").isSuccess()
        ? sandbox.readBytes("/tmp/made.bin") : new byte[0];
    assertThat(fromSandbox).hasSize(300_000);
    assertThat(sha256(fromSandbox)).isEqualTo(sandbox.exec("sha256sum /tmp/made.bin | cut -c1-64").stdout().strip());
  }

  @Test
  @DisplayName("reading a missing file is a typed not-found; a directory is refused")
  void missingFile() {
    assertThatThrownBy(() -> sandbox.readFile("/home/user/nope.txt"))
        .isInstanceOf(SandboxFileNotFoundException.class)
        .hasMessageContaining("/home/user/nope.txt");
    assertThatThrownBy(() -> sandbox.readFile("/home/user"))
        .isNotInstanceOf(SandboxFileNotFoundException.class)
        .hasMessageContaining("directory");
  }

  @Test
  @DisplayName("the base template carries the tools the README lists, git among them, and a git repository works as the default user")
  void baseTools() {
    ExecResult tools = sandbox.exec("for t in bash tar curl python3 ps sudo find git; do command -v $t >/dev/null || echo missing $t; done");
    assertThat(tools.stdout()).isEmpty();
    ExecResult git = sandbox.exec("cd $(mktemp -d) && git init -q && git -c user.email=u@example.invalid -c user.name=u "
        + "commit -q --allow-empty -m first && git log --format=%s");
    assertThat(git.exitCode()).as(git.stderr()).isZero();
    assertThat(git.stdout().strip()).isEqualTo("first");
    // what else E2B's base template gives: pip, venv, Node.js
    ExecResult more = sandbox.exec("for t in pip3 node; do command -v $t >/dev/null || echo missing $t; done;"
        + " node -e 'console.log(6 * 7)'");
    assertThat(more.exitCode()).as(more.stderr()).isZero();
    assertThat(more.stdout()).isEqualTo("42\n");
    // a venv installs pip from Debian's bundled wheels, offline: 3.5 s on a quiet machine, past
    // the default 60 s command timeout once on a loaded CI machine, so this one call gets more
    ExecResult venv = sandbox.exec("python3 -m venv /tmp/fid-venv && /tmp/fid-venv/bin/pip --version | cut -c1-4",
        ExecOptions.defaults().withTimeout(Duration.ofMinutes(4)));
    assertThat(venv.exitCode()).as(venv.stderr()).isZero();
    assertThat(venv.stdout()).isEqualTo("pip \n");
  }

  @Test
  @DisplayName("several MB of stdout stream through whole, and UTF-8 split across chunks arrives intact")
  void largeOutput() {
    ExecResult r = sandbox.exec("head -c 6000000 /dev/zero | tr '\\0' 'a'; python3 -c \"import sys; sys.stdout.write('é€😀' * 100000)\"");
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).hasSize(6_000_000 + 4 * 100_000);
    assertThat(r.stdout().substring(0, 6_000_000)).matches("a+");
    assertThat(r.stdout().substring(6_000_000)).isEqualTo("é€😀".repeat(100_000));
  }

  @Test
  @DisplayName("a command past its deadline is killed and thrown as a CommandTimeoutException with the output it wrote first")
  void commandDeadline() {
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> sandbox.exec("echo started; echo warming >&2; sleep 60",
        ExecOptions.defaults().withTimeout(Duration.ofSeconds(2))))
        .isInstanceOfSatisfying(CommandTimeoutException.class, e -> {
          assertThat(e.code()).isEqualTo("deadline_exceeded");
          assertThat(e.timeout()).isEqualTo(Duration.ofSeconds(2));
          assertThat(e.command()).endsWith("sleep 60");
          assertThat(e.stdout()).isEqualTo("started\n");
          assertThat(e.stderr()).isEqualTo("warming\n");
          assertThat(e.getMessage()).contains("timed out after 2000 ms");
        });
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(30));
    await().atMost(Duration.ofSeconds(10))
        .until(() -> sandbox.exec("pgrep -fx 'sleep 60' >/dev/null && echo running || echo gone").stdout().strip().equals("gone"));
  }

  @Test
  @DisplayName("onStdout and onStderr see output while the command still runs, and the result still holds all of it")
  void outputCallbacks() throws Exception {
    String gate = "/tmp/gate-" + UUID.randomUUID();
    java.util.concurrent.CompletableFuture<String> firstLine = new java.util.concurrent.CompletableFuture<>();
    StringBuilder seenOut = new StringBuilder();
    StringBuilder seenErr = new StringBuilder();
    ExecOptions follow = ExecOptions.defaults().withTimeout(Duration.ofSeconds(60))
        .onStdout(text -> {
          synchronized (seenOut) {
            seenOut.append(text);
          }
          firstLine.complete(text);
        })
        .onStderr(text -> {
          synchronized (seenErr) {
            seenErr.append(text);
          }
        });
    var running = java.util.concurrent.CompletableFuture.supplyAsync(() -> sandbox.exec(
        "echo step-1; echo careful >&2; while [ ! -e " + gate + " ]; do sleep 0.05; done; echo step-2", follow));
    // the command waits for a file that is written only once its first line was delivered
    assertThat(firstLine.get(20, java.util.concurrent.TimeUnit.SECONDS)).startsWith("step-1");
    assertThat(running).isNotDone();
    sandbox.writeFile(gate, "go");
    ExecResult r = running.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(r.exitCode()).isZero();
    assertThat(r.stdout()).isEqualTo("step-1\nstep-2\n");
    synchronized (seenOut) {
      assertThat(seenOut.toString()).isEqualTo(r.stdout());
    }
    synchronized (seenErr) {
      assertThat(seenErr.toString()).isEqualTo("careful\n").isEqualTo(r.stderr());
    }
  }

  @Test
  @DisplayName("a callback that throws ends exec with its exception and kills the command")
  void callbackThrows() {
    IllegalStateException stop = new IllegalStateException("listener gave up");
    assertThatThrownBy(() -> sandbox.exec("echo one; exec sleep 61",
        ExecOptions.defaults().onStdout(text -> {
          throw stop;
        })))
        .isSameAs(stop);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> sandbox.exec("pgrep -fx 'sleep 61' >/dev/null && echo running || echo gone").stdout().strip().equals("gone"));
  }

  @Test
  @DisplayName("a missing sandbox is a typed 404 everywhere: info, connect, get, kill, timeout")
  void notFound() {
    String missing = "nosuchsandbox0000000";
    assertThatThrownBy(() -> e2b.info(missing)).isInstanceOfSatisfying(SandboxNotFoundException.class,
        e -> assertThat(e.sandboxId()).isEqualTo(missing));
    assertThatThrownBy(() -> e2b.connect(missing)).isInstanceOf(SandboxNotFoundException.class);
    assertThat(e2b.get(missing)).isEmpty();
    assertThat(e2b.kill(missing)).isFalse();
    assertThatThrownBy(() -> e2b.setTimeout(missing, Duration.ofMinutes(1))).isInstanceOf(SandboxNotFoundException.class);
  }

  @Test
  @DisplayName("a wrong API key is refused with 401, and so is a missing key")
  void wrongKey() {
    try (E2BSandboxProvider wrong = E2BSandboxProvider.builder()
        .apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).apiKey("e2b_0000").build()) {
      assertThatThrownBy(() -> wrong.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(401));
      assertThatThrownBy(() -> wrong.api().create())
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(401));
    }
    try (E2BSandboxProvider none = E2BSandboxProvider.builder()
        .apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl()).environment(Map.of()).build()) {
      assertThatThrownBy(() -> none.api().create()).hasMessageContaining("requires an API key");
    }
  }

  @Test
  @DisplayName("/files streams: the first bytes of a file arrive while the rest is still being written (nothing is held back in server memory)")
  void filesStream() throws Exception {
    // a named pipe whose writer sends "hello", then waits for a signal before sending the rest: a
    // server that collected the whole file before answering could never return the first bytes
    // (the writer lets go of the command's output first: opening the pipe blocks until a reader
    // comes, and envd reports a command's end only once nothing holds its output any more)
    assertThat(sandbox.exec("rm -f /tmp/go && mkfifo /home/user/pipe && (exec >/dev/null 2>&1 </dev/null; nohup sh -c 'printf hello; "
        + "while [ ! -e /tmp/go ]; do sleep 0.05; done; printf \\ bye' > /home/user/pipe 2>/dev/null &)").exitCode()).isZero();
    URI url = server.sandboxUrl().resolve("/files?path=/home/user/pipe");
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try {
      HttpResponse<java.io.InputStream> r = http.sendAsync(HttpRequest.newBuilder(url).header("E2b-Sandbox-Id", sandbox.id())
          .header("X-Access-Token", Tokens.envdToken(server, sandbox.id())).GET().build(), HttpResponse.BodyHandlers.ofInputStream())
          .get(20, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      try (java.io.InputStream in = r.body()) {
        byte[] first = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            return in.readNBytes(5);
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }).get(20, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(new String(first, StandardCharsets.US_ASCII)).isEqualTo("hello");
        assertThat(sandbox.exec("test -e /tmp/go").exitCode()).as("the writer is still waiting").isEqualTo(1);
        sandbox.exec("touch /tmp/go");
        assertThat(new String(in.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo(" bye");
      }
    } finally {
      http.shutdownNow(); // a failed attempt must not wait on its own unanswered request
      sandbox.exec("touch /tmp/go; rm -f /home/user/pipe /tmp/go");
    }
  }

  @Test
  @DisplayName("envd refuses a request without the sandbox's own token, or with another sandbox's")
  void wrongToken() throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      for (String token : List.of("", "not-the-token")) {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.sandboxUrl().resolve("/filesystem.Filesystem/Stat"))
            .header("E2b-Sandbox-Id", sandbox.id())
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"/etc/passwd\"}"));
        if (!token.isEmpty()) {
          b.header("X-Access-Token", token);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(401);
      }
      HttpResponse<String> files = http.send(HttpRequest.newBuilder(server.sandboxUrl().resolve("/files?path=/etc/passwd"))
          .header("E2b-Sandbox-Id", sandbox.id()).header("X-Access-Token", "wrong").GET().build(), HttpResponse.BodyHandlers.ofString());
      assertThat(files.statusCode()).isEqualTo(401);
      assertThat(files.body()).doesNotContain("root:");
    }
    try (LiveSandbox other = e2b.create()) {
      // the other sandbox's token must not open this one
      URI url = server.sandboxUrl().resolve("/files?path=/etc/hostname");
      try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
        String otherToken = Tokens.envdToken(server, other.id());
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(url).header("E2b-Sandbox-Id", sandbox.id())
            .header("X-Access-Token", otherToken).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(401);
        HttpResponse<String> own = http.send(HttpRequest.newBuilder(url).header("E2b-Sandbox-Id", other.id())
            .header("X-Access-Token", otherToken).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(own.statusCode()).isEqualTo(200);
        assertThat(own.body().strip()).isEqualTo(other.id());
      }
    }
  }

  @Test
  @DisplayName("a sandbox without a network policy reaches nothing: not the host's loopback server, not the gateway, no name")
  void noNetwork() {
    int apiPort = server.apiUrl().getPort();
    ExecResult curl = sandbox.exec("curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:" + apiPort + "/health");
    assertThat(curl.exitCode()).isNotZero();
    assertThat(curl.stderr()).containsIgnoringCase("failed to connect");
    io.sandboxes.EgressProbe p = server.egressProbe();
    assertThat(sandbox.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' http://" + p.rawIp() + "/").stdout()).isEqualTo("000");
    assertThat(sandbox.exec("curl -s -o /dev/null -m 5 -w '%{http_code}' http://" + p.allowedHost() + "/").stdout()).isEqualTo("000");
    assertThat(sandbox.exec("getent hosts " + p.allowedHost()).exitCode()).isNotZero();
  }

  @Test
  @DisplayName("a sandbox cannot read the host's files, not even through a symlink it makes")
  void hostFilesOutOfReach() throws Exception {
    Path secret = Files.createTempFile(Path.of("/tmp"), "sandboxes-host-secret-", ".txt");
    try {
      String marker = "host-secret-" + UUID.randomUUID();
      Files.writeString(secret, marker);
      ExecResult cat = sandbox.exec("cat " + secret + " 2>&1; grep -rs " + marker + " /tmp /home /root /etc | head -1");
      assertThat(cat.stdout()).doesNotContain(marker).contains("No such file");
      assertThatThrownBy(() -> sandbox.readFile(secret.toString())).isInstanceOf(SandboxFileNotFoundException.class);
      sandbox.exec("ln -sf " + secret + " /home/user/link-to-host");
      assertThatThrownBy(() -> sandbox.readFile("/home/user/link-to-host")).isInstanceOf(SandboxFileNotFoundException.class);
      sandbox.writeFile("/home/user/link-to-host", "written through the link");
      assertThat(Files.readString(secret)).isEqualTo(marker);
    } finally {
      Files.deleteIfExists(secret);
    }
  }

  @Test
  @DisplayName("info and listing report the sandbox with its template, metadata and times; filters and pages work")
  void infoAndList() {
    SandboxInfo info = e2b.info(sandbox.id());
    assertThat(info.id()).isEqualTo(sandbox.id());
    assertThat(info.templateId()).isEqualTo("base");
    assertThat(info.state()).isEqualTo(SandboxState.RUNNING);
    assertThat(info.metadata()).containsEntry("suite", "client-server");
    assertThat(info.endAt()).isAfter(info.startedAt());
    assertThat(info.envdVersion()).matches("\\d+\\.\\d+\\.\\d+");

    String tag = "list-" + UUID.randomUUID();
    try (LiveSandbox a = e2b.create(SandboxSpec.defaults().withMetadata(Map.of("tag", tag, "who", "a b&c=d")));
         LiveSandbox b = e2b.create(SandboxSpec.defaults().withMetadata(Map.of("tag", tag, "who", "b")))) {
      List<SandboxInfo> both = e2b.listAll(SandboxQuery.all().withMetadata(Map.of("tag", tag)));
      assertThat(both).extracting(SandboxInfo::id).containsExactlyInAnyOrder(a.id(), b.id());
      List<SandboxInfo> onlyA = e2b.listAll(SandboxQuery.all().withMetadata(Map.of("tag", tag, "who", "a b&c=d")));
      assertThat(onlyA).extracting(SandboxInfo::id).containsExactly(a.id());
      SandboxPage first = e2b.list(SandboxQuery.all().withMetadata(Map.of("tag", tag)).withLimit(1));
      assertThat(first.items()).hasSize(1);
      assertThat(first.hasNext()).isTrue();
      SandboxPage second = e2b.list(SandboxQuery.all().withMetadata(Map.of("tag", tag)).withLimit(1).withNextToken(first.nextTokenValue()));
      assertThat(second.items()).hasSize(1);
      assertThat(second.hasNext()).isFalse();
      assertThat(List.of(first.items().get(0).id(), second.items().get(0).id()))
          .containsExactlyInAnyOrder(a.id(), b.id());
      assertThat(e2b.listAll(SandboxQuery.all().withMetadata(Map.of("tag", tag)).withStates(java.util.Set.of(SandboxState.PAUSED))))
          .isEmpty();
    }
  }

  @Test
  @DisplayName("a killed sandbox is gone; a sandbox past its timeout is killed by the server")
  void killAndDeadline() {
    LiveSandbox doomed = e2b.create();
    assertThat(doomed.kill()).isTrue();
    assertThatThrownBy(() -> e2b.info(doomed.id())).isInstanceOf(SandboxNotFoundException.class);
    assertThatThrownBy(() -> doomed.exec("true")).isInstanceOf(SandboxNotFoundException.class);

    LiveSandbox shortLived = e2b.create(SandboxSpec.defaults().withTimeout(Duration.ofMinutes(5)));
    shortLived.setTimeout(Duration.ofSeconds(1));
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
        assertThatThrownBy(() -> e2b.info(shortLived.id())).isInstanceOf(SandboxNotFoundException.class));
    assertThat(e2b.kill(shortLived.id())).isFalse();
  }

  @Test
  @DisplayName("connect returns a working handle to an existing sandbox")
  void connectExisting() {
    LiveSandbox again = e2b.connect(sandbox.id());
    assertThat(again.exec("echo $SANDBOX_LEVEL").stdout()).isEqualTo("from-create\n");
  }

  private static String sha256(byte[] data) {
    try {
      return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(data));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
