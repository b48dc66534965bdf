package io.sandboxes.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.EgressProbe;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.Commands;
import io.sandboxes.e2b.EntryInfo;
import io.sandboxes.e2b.FileType;
import io.sandboxes.e2b.Filesystem;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.ProcessInfo;
import io.sandboxes.local.LocalServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * E2B's groups as a user's build reaches them through the published jars: processes by pid, files
 * as streams, and a network given at create. The sandboxes come from a {@link LocalServer} this
 * class starts, as a user's test would, so that the network check can aim at the server's own
 * egress witnesses: nothing here reaches for a public address.
 */
class E2BGroupsTest {
  private static LocalServer server;
  private static SandboxClient sandboxes;

  @BeforeAll
  static void start() {
    server = LocalServer.builder().warmPool(0).build().start();
    sandboxes = Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey());
  }

  @AfterAll
  static void stop() {
    if (sandboxes != null) {
      sandboxes.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  @DisplayName("a command started in the background is listed, attached to by pid from another handle, written to and killed")
  void processesByPid() throws Exception {
    try (LiveSandbox sandbox = sandboxes.create()) {
      CommandHandle job = sandbox.commands().start("while read line; do echo \"got $line\"; done",
          ExecOptions.defaults().withStdin(true).withTimeout(Duration.ZERO));
      int pid = job.pid();
      job.disconnect();                                       // it keeps running without a listener

      Commands commands = sandboxes.connect(sandbox.id()).commands(); // another handle, as another JVM has
      assertThat(commands.list()).extracting(ProcessInfo::pid).contains(pid);
      CompletableFuture<String> heard = new CompletableFuture<>();
      StringBuilder output = new StringBuilder();
      try (CommandHandle again = commands.connect(pid, chunk -> {
        synchronized (output) {
          output.append(chunk);
          if (output.toString().contains("got ping\n")) {
            heard.complete(output.toString());
          }
        }
      }, null)) {
        commands.sendStdin(pid, "ping\n");
        assertThat(heard.get(30, TimeUnit.SECONDS)).as("what the attached handle heard").contains("got ping\n");
        assertThat(again.waitFor(Duration.ZERO)).as("still running after the echo").isEmpty();

        assertThat(commands.kill(pid)).as("kill of a running process").isTrue();
        ExecResult killed = again.waitFor(Duration.ofSeconds(30)).orElseThrow(() -> new AssertionError("no end within 30 s of the kill"));
        assertThat(killed.isSuccess()).as("a killed process is not a success").isFalse();
        assertThat(killed.exitCode()).as("the exit code of a killed process").isEqualTo(-1);
      }
      assertThat(sandbox.exec("[ -e /proc/" + pid + " ] && echo alive || echo gone").stdout().strip())
          .as("the process after its end was heard").isEqualTo("gone");
    }
  }

  @Test
  @DisplayName("a 24 MiB stream is written and read back through files(), never whole in memory, and its digest matches on both sides")
  void filesStreaming() throws Exception {
    long size = 24L << 20;
    try (LiveSandbox sandbox = sandboxes.create()) {
      Filesystem files = sandbox.files();
      MessageDigest sent = MessageDigest.getInstance("SHA-256");
      try (InputStream source = new DigestInputStream(new Generated(size, 42), sent)) {
        files.write("streams/big.bin", source);
      }
      String sentHex = HexFormat.of().formatHex(sent.digest());

      EntryInfo info = files.getInfo("streams/big.bin");
      assertThat(info.type()).isEqualTo(FileType.FILE);
      assertThat(info.size()).isEqualTo(size);
      assertThat(sandbox.exec("sha256sum streams/big.bin").stdout()).as("the digest inside the sandbox").startsWith(sentHex + " ");

      MessageDigest read = MessageDigest.getInstance("SHA-256");
      long readBytes;
      try (InputStream in = new DigestInputStream(files.readStream("streams/big.bin"), read)) {
        readBytes = in.transferTo(OutputStream.nullOutputStream());
      }
      assertThat(readBytes).isEqualTo(size);
      assertThat(HexFormat.of().formatHex(read.digest())).as("the digest of what was read back").isEqualTo(sentHex);
    }
  }

  @Test
  @DisplayName("a sandbox created with a deny-all network reaches none of the server's witnesses, which one allowed by name reaches")
  void networkAtCreate() {
    assertThat(server.egressEnforced()).as("this server enforces network policies (else nothing here is observed)").isTrue();
    EgressProbe witnesses = server.egressProbe();
    String allowed = "http://" + witnesses.allowedHost() + "/";
    String rawIp = "http://" + witnesses.rawIp() + "/";
    try (LiveSandbox closed = sandboxes.provider().api().create(SandboxSpec.defaults().withNetwork(SandboxNetwork.denyAll()));
         LiveSandbox open = sandboxes.provider().api().create(SandboxSpec.defaults()
             .withNetwork(SandboxNetwork.allowOnly(witnesses.allowedHost())))) {
      assertThat(status(open, allowed, "")).as("the allowed witness, from a sandbox that allows it").isEqualTo("200");
      assertThat(status(closed, allowed, "")).as("the allowed witness, from the deny-all sandbox").isIn("403", "000");
      assertThat(status(closed, rawIp, "--noproxy '*'")).as("the raw-IP witness, around the proxy").isEqualTo("000");
      assertThat(closed.info().network()).as("the network the server holds for the deny-all sandbox").isNotNull()
          .satisfies(n -> assertThat(n.allowInternetAccess()).isFalse())
          .satisfies(n -> assertThat(n.denyOut()).containsExactly(SandboxNetwork.ALL_TRAFFIC))
          .satisfies(n -> assertThat(n.allowOut()).isEmpty());
    }
  }

  /** The HTTP status curl saw from inside the sandbox, "000" for no answer. */
  private static String status(LiveSandbox sandbox, String url, String curlOptions) {
    return sandbox.exec("curl -s -o /dev/null -m 15 -w '%{http_code}' " + curlOptions + " " + url).stdout().strip();
  }

  /** Bytes made as they are read, from a seeded generator: the test never holds the whole file either. */
  private static final class Generated extends InputStream {
    private final Random random;
    private long left;

    Generated(long size, long seed) {
      this.left = size;
      this.random = new Random(seed);
    }

    @Override
    public int read() {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (left == 0) {
        return -1;
      }
      int n = (int) Math.min(len, left);
      byte[] chunk = new byte[n];
      random.nextBytes(chunk);
      System.arraycopy(chunk, 0, b, off, n);
      left -= n;
      return n;
    }
  }
}
