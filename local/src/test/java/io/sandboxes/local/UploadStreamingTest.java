package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Envd;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Uploads stream into the sandbox: a multipart body is parsed as it arrives and each part handed
 * to the in-sandbox daemon, so neither the server's heap nor its disk holds a copy of the file. A
 * client that breaks off leaves the target as it was. Isolated, so the heap it watches is the
 * upload's and not another test's.
 */
@Isolated
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UploadStreamingTest {
  private static final String BOUNDARY = "----sandboxes-upload-test-7f3a";
  private LiveSandbox sandbox;
  private HttpClient client;
  private URI sandboxUrl;
  private String token;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) throws Exception {
    sandbox = e2b.create();
    token = Tokens.envdToken(server, sandbox.id());
    sandboxUrl = server.sandboxUrl();
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
    if (client != null) {
      client.close();
    }
  }

  /** Deterministic pseudo-random bytes, made as they are read; their SHA-256 is known at the end. */
  private static final class Generated extends InputStream {
    private final long size;
    private final MessageDigest sha;
    private long made;
    private long state = 0x9E3779B97F4A7C15L;

    Generated(long size) throws Exception {
      this.size = size;
      this.sha = MessageDigest.getInstance("SHA-256");
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (made == size) {
        return -1;
      }
      int n = (int) Math.min(len, size - made);
      for (int i = 0; i < n; i++) {
        if ((made + i) % 8 == 0) {
          state ^= state << 13;
          state ^= state >>> 7;
          state ^= state << 17;
        }
        b[off + i] = (byte) (state >>> (8 * ((made + i) % 8)));
      }
      sha.update(b, off, n);
      made += n;
      return n;
    }

    String sha256() {
      return HexFormat.of().formatHex(sha.digest());
    }
  }

  private static byte[] partHead(String fileName) {
    return ("--" + BOUNDARY + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + fileName
        + "\"\r\nContent-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8);
  }

  private HttpRequest.Builder post(String query) {
    return HttpRequest.newBuilder(sandboxUrl.resolve("/files" + query))
        .header(Envd.SANDBOX_ID_HEADER, sandbox.id())
        .header(Envd.ACCESS_TOKEN_HEADER, token)
        .header("Content-Type", "multipart/form-data; boundary=" + BOUNDARY)
        .timeout(Duration.ofMinutes(4));
  }

  /** The files in the JVM's temp folder now, so that only files made later count as spools. */
  private static java.util.Set<Path> existingTempFiles() throws IOException {
    try (Stream<Path> top = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return top.collect(java.util.stream.Collectors.toSet());
    }
  }

  /**
   * The files a spooling upload would make: new files in the JVM's temp folder (files that were
   * there before, such as other programs' growing logs, are not spools) and anything in the old
   * spool folders in it.
   */
  private static List<Path> spoolCandidates(Instant since, java.util.Set<Path> existing) throws IOException {
    List<Path> out = new ArrayList<>();
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    try (Stream<Path> top = Files.list(tmp)) {
      for (Path p : (Iterable<Path>) top::iterator) {
        try {
          if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
            if (!existing.contains(p) && Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).toInstant().isAfter(since)) {
              out.add(p);
            }
          } else if (p.getFileName().toString().startsWith("sandboxes-uploads-")
              && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> inner = Files.list(p)) {
              inner.forEach(out::add);
            }
          }
        } catch (IOException ignored) {
          // gone while looking: another process's temporary file
        }
      }
    }
    return out;
  }

  private static long sizeOrZero(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return 0;
    }
  }

  /** The JVM's live heap (after a collection) plus its direct buffers, where Jetty's buffer pool keeps bytes. */
  private static long liveMemory() {
    System.gc();
    long direct = ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class).stream()
        .filter(b -> b.getName().equals("direct")).mapToLong(java.lang.management.BufferPoolMXBean::getMemoryUsed).sum();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() + direct;
  }

  @Test
  @DisplayName("a 512 MiB multipart upload arrives intact while the server's memory stays bounded and nothing is spooled to disk")
  void largeUploadStreams() throws Exception {
    long size = 512L * 1024 * 1024;
    Generated content = new Generated(size);
    Instant since = Instant.now().minusSeconds(1);
    java.util.Set<Path> existing = existingTempFiles();
    long baseline = liveMemory();
    AtomicLong peakHeap = new AtomicLong();
    AtomicLong biggestSpool = new AtomicLong();
    AtomicReference<String> biggestName = new AtomicReference<>("");
    AtomicReference<Boolean> running = new AtomicReference<>(true);
    Thread watcher = Thread.ofPlatform().name("upload-watcher").start(() -> {
      while (running.get()) {
        peakHeap.accumulateAndGet(liveMemory() - baseline, Math::max);
        try {
          for (Path p : spoolCandidates(since, existing)) {
            long s = sizeOrZero(p);
            if (s > biggestSpool.get()) {
              biggestSpool.set(s);
              biggestName.set(p.toString());
            }
          }
          Thread.sleep(250);
        } catch (IOException | InterruptedException e) {
          return;
        }
      }
    });
    HttpResponse<String> r;
    try {
      InputStream body = new SequenceInputStream(java.util.Collections.enumeration(List.of(
          new java.io.ByteArrayInputStream(partHead("big.bin")), content,
          new java.io.ByteArrayInputStream(("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.UTF_8)))));
      r = client.send(post("?path=" + URLEncoder.encode("/home/user/big.bin", StandardCharsets.UTF_8))
          .POST(HttpRequest.BodyPublishers.ofInputStream(() -> body)).build(), HttpResponse.BodyHandlers.ofString());
    } finally {
      running.set(false);
      watcher.join();
    }
    System.err.printf("512 MiB upload: live heap and direct buffers grew by at most %d KiB, largest temp file %d bytes (%s)%n",
        peakHeap.get() / 1024, biggestSpool.get(), biggestName.get());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("\"path\":\"/home/user/big.bin\"");
    assertThat(sandbox.exec("stat -c %s /home/user/big.bin; sha256sum /home/user/big.bin | cut -c1-64").stdout())
        .isEqualTo(size + "\n" + content.sha256() + "\n");
    assertThat(peakHeap.get()).as("growth of the live heap and direct buffers during the upload").isLessThan(128L * 1024 * 1024);
    assertThat(biggestSpool.get()).as("the largest file in the temp folders during the upload: %s", biggestName.get())
        .isLessThan(16L * 1024 * 1024);
    sandbox.exec("rm -f /home/user/big.bin");
  }

  @Test
  @DisplayName("several files in one multipart body each go to their own path, as the official SDKs send them")
  void severalFiles() throws Exception {
    byte[] body = concat(partHead("/home/user/multi/a.txt"), "first file".getBytes(StandardCharsets.UTF_8),
        "\r\n".getBytes(StandardCharsets.UTF_8), partHead("/home/user/multi/deeper/b.txt"),
        "second\r\nfile with a CRLF and --dashes".getBytes(StandardCharsets.UTF_8),
        ("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> r = client.send(post("").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("/home/user/multi/a.txt").contains("/home/user/multi/deeper/b.txt");
    assertThat(sandbox.readFile("/home/user/multi/a.txt")).isEqualTo("first file");
    assertThat(sandbox.readFile("/home/user/multi/deeper/b.txt")).isEqualTo("second\r\nfile with a CRLF and --dashes");
  }

  @Test
  @DisplayName("a body without its closing boundary is refused and writes nothing")
  void truncatedBody() throws Exception {
    sandbox.writeFile("/home/user/cut.txt", "as it was");
    byte[] body = concat(partHead("/home/user/cut.txt"), "half of a file".getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> r = client.send(post("").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    assertThat(sandbox.readFile("/home/user/cut.txt")).isEqualTo("as it was");
    assertThat(sandbox.exec("ls -A /home/user | grep -c envd || true").stdout().strip()).isEqualTo("0");
  }

  @Test
  @DisplayName("a client that disconnects mid-upload leaves the target as it was, no temporary file beside it and no spool")
  void disconnectMidUpload() throws Exception {
    sandbox.exec("mkdir -p /home/user/dc && printf original > /home/user/dc/target.bin");
    Instant since = Instant.now().minusSeconds(1);
    java.util.Set<Path> existing = existingTempFiles();
    try (Socket s = new Socket(sandboxUrl.getHost(), sandboxUrl.getPort())) {
      OutputStream out = s.getOutputStream();
      out.write(("POST /files?path=%2Fhome%2Fuser%2Fdc%2Ftarget.bin HTTP/1.1\r\nHost: localhost\r\n"
          + Envd.SANDBOX_ID_HEADER + ": " + sandbox.id() + "\r\n" + Envd.ACCESS_TOKEN_HEADER + ": " + token + "\r\n"
          + "Content-Type: multipart/form-data; boundary=" + BOUNDARY + "\r\n"
          + "Content-Length: " + (1L << 30) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      out.write(partHead("target.bin"));
      byte[] block = new byte[1 << 20];
      java.util.Arrays.fill(block, (byte) 'x');
      for (int i = 0; i < 8; i++) {
        out.write(block);
      }
      out.flush();
      // the write is under way in the sandbox: its temporary file is there
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> sandbox.exec("ls -A /home/user/dc").stdout(), ls -> ls.contains(".target.bin.envd-"));
    }
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300))
        .until(() -> sandbox.exec("ls -A /home/user/dc").stdout(), ls -> ls.equals("target.bin\n"));
    assertThat(sandbox.readFile("/home/user/dc/target.bin")).isEqualTo("original");
    assertThat(spoolCandidates(since, existing)).allSatisfy(p -> assertThat(sizeOrZero(p)).as(p.toString()).isLessThan(4L * 1024 * 1024));
  }

  @Test
  @DisplayName("a server that stops mid-upload leaves the target as it was and no temporary file, as a restarted server finds")
  void serverStopsMidUpload() throws Exception {
    String serverId = "uploadstop-" + Long.toHexString(System.nanoTime());
    Path state = Files.createTempDirectory("sandboxes-uploadstop-state-");
    String id;
    LocalServer first = LocalServer.builder().serverId(serverId).stateDir(state).keepSandboxesOnClose(true).build().start();
    try (E2BSandboxProviderHolder p = new E2BSandboxProviderHolder(first)) {
      LiveSandbox s = p.provider.api().create();
      id = s.id();
      s.exec("mkdir -p /home/user/st && printf original > /home/user/st/target.bin");
      String tok = Tokens.envdToken(first, id);
      try (Socket sock = new Socket(first.sandboxUrl().getHost(), first.sandboxUrl().getPort())) {
        OutputStream out = sock.getOutputStream();
        out.write(("POST /files?path=%2Fhome%2Fuser%2Fst%2Ftarget.bin HTTP/1.1\r\nHost: localhost\r\n"
            + Envd.SANDBOX_ID_HEADER + ": " + id + "\r\n" + Envd.ACCESS_TOKEN_HEADER + ": " + tok + "\r\n"
            + "Content-Type: multipart/form-data; boundary=" + BOUNDARY + "\r\n"
            + "Content-Length: " + (1L << 30) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        out.write(partHead("target.bin"));
        out.write(new byte[4 << 20]);
        out.flush();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
            .until(() -> s.exec("ls -A /home/user/st").stdout(), ls -> ls.contains(".target.bin.envd-"));
        first.close(); // mid-upload: the daemon loses its host connection
      }
    } finally {
      first.close();
    }
    try (LocalServer second = LocalServer.builder().serverId(serverId).stateDir(state).build().start();
        E2BSandboxProviderHolder p = new E2BSandboxProviderHolder(second)) {
      LiveSandbox s = p.provider.api().connect(id);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300))
          .until(() -> s.exec("ls -A /home/user/st").stdout(), ls -> ls.equals("target.bin\n"));
      assertThat(s.readFile("/home/user/st/target.bin")).isEqualTo("original");
    }
  }

  /** A provider for a server of the test's own. */
  private static final class E2BSandboxProviderHolder implements AutoCloseable {
    final io.sandboxes.e2b.E2BSandboxProvider provider;

    E2BSandboxProviderHolder(LocalServer server) {
      provider = io.sandboxes.e2b.E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
          .apiKey(server.apiKey()).build();
    }

    @Override
    public void close() {
      provider.close();
    }
  }

  @Test
  @DisplayName("a spool an older server left in its upload folder is removed at start, links in it removed and not followed")
  void leftoverSpoolRemovedAtStart() throws Exception {
    String serverId = "spooltest-" + Long.toHexString(System.nanoTime());
    Path spool = Path.of(System.getProperty("java.io.tmpdir"), "sandboxes-uploads-" + serverId);
    Path outside = Files.createTempFile("sandboxes-spool-outside-", ".txt");
    try {
      Files.createDirectories(spool);
      Files.write(spool.resolve("MultiPart123456"), new byte[4096]);
      Files.createSymbolicLink(spool.resolve("MultiPartLink"), outside);
      Path state = Files.createTempDirectory("sandboxes-spooltest-state-");
      try (LocalServer server = LocalServer.builder().serverId(serverId).stateDir(state).build().start()) {
        assertThat(spool).doesNotExist();
        assertThat(outside).exists();
        assertThat(server.apiUrl()).isNotNull();
      }
    } finally {
      Files.deleteIfExists(spool.resolve("MultiPart123456"));
      Files.deleteIfExists(spool.resolve("MultiPartLink"));
      Files.deleteIfExists(spool);
      Files.deleteIfExists(outside);
    }
  }

  private static byte[] concat(byte[]... parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }
}
