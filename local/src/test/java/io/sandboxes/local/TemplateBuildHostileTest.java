package io.sandboxes.local;

import static io.sandboxes.local.TemplateBuildTest.build;
import static io.sandboxes.local.TemplateBuildTest.call;
import static io.sandboxes.local.TemplateBuildTest.filesHash;
import static io.sandboxes.local.TemplateBuildTest.gzippedTar;
import static io.sandboxes.local.TemplateBuildTest.messages;
import static io.sandboxes.local.TemplateBuildTest.request;
import static io.sandboxes.local.TemplateBuildTest.step;
import static io.sandboxes.local.TemplateBuildTest.unique;
import static io.sandboxes.local.TemplateBuildTest.upload;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.dockerjava.api.model.Container;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.TemplateBuildTest.Requested;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 21, class 6: template builds are hostile input, tried against a real server with real
 * Docker builds and a small build budget (64 MiB): a gzip bomb, names of 64 KiB and 10 MiB, an
 * upload whose content is not what its hash says, uploads nothing refers to, and a RUN step that
 * floods its output. Each of these passed (or stalled, or filled the disk) before the fix.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TemplateBuildHostileTest {
  private static final int BUDGET_MB = 64;
  private static final long MIB = 1024 * 1024;
  private String serverId;
  private Path state;
  private LocalServer server;

  @BeforeAll
  void start() throws IOException {
    serverId = "tpl-hostile-" + UUID.randomUUID().toString().substring(0, 8);
    state = Files.createTempDirectory("sandboxes-tpl-hostile-");
    server = LocalServer.builder().serverId(serverId).stateDir(state).templateBuildBudgetMB(BUDGET_MB).warmPool(0).build().start();
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
    TestImages.removeMadeBy(serverId);
  }

  private Path uploads() {
    return state.resolve("template-files");
  }

  private List<String> uploadFiles() throws IOException {
    if (!Files.isDirectory(uploads())) {
      return List.of();
    }
    try (var s = Files.list(uploads())) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private boolean present(Requested r, String hash) throws Exception {
    return call(server, "GET", "/templates/" + r.templateId() + "/files/" + hash, null).body().path("present").asBoolean();
  }

  private static ObjectNode copyOf(String src, String dest, String hash) {
    ObjectNode body = Json.object().put("fromTemplate", "base");
    body.putArray("steps").add(step("ENV", "MARK", UUID.randomUUID().toString())).add(step("COPY", src, dest, "", "").put("filesHash", hash));
    return body;
  }

  @Test
  @DisplayName("a gzip bomb (a 0.5 MiB upload of 512 MiB of zeros): the build fails naming its 64 MiB budget, and nothing of it stays on the disk")
  void gzipBomb() throws Exception {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update("COPY . /opt/".getBytes(StandardCharsets.UTF_8));
    sha.update(("zeros.bin" + 0100644 + (512 * MIB)).getBytes(StandardCharsets.UTF_8));
    try (TarArchiveOutputStream tar = new TarArchiveOutputStream(new GZIPOutputStream(raw, 64 * 1024))) {
      TarArchiveEntry e = new TarArchiveEntry("zeros.bin");
      e.setSize(512 * MIB);
      e.setMode(0644);
      tar.putArchiveEntry(e);
      byte[] zeros = new byte[(int) MIB];
      for (int i = 0; i < 512; i++) {
        tar.write(zeros);
        sha.update(zeros);
      }
      tar.closeArchiveEntry();
    }
    byte[] bomb = raw.toByteArray();
    assertThat(bomb.length).isLessThan((int) MIB);
    String hash = HexFormat.of().formatHex(sha.digest());
    Requested r = request(server, unique("tpl-bomb"));
    upload(server, r, hash, bomb);
    List<JsonNode> log = new ArrayList<>();
    JsonNode done = build(server, r, copyOf(".", "/opt/", hash), log);
    assertThat(done.path("status").asText()).as("%s", messages(log)).isEqualTo("error");
    assertThat(done.path("reason").path("message").asText()).contains("budget of " + BUDGET_MB + " MiB");
    // what it expanded to went nowhere: the store holds uploads alone, no re-packed files
    assertThat(uploadFiles()).contains(hash + ".tar").allMatch(f -> f.endsWith(".tar"));
  }

  /** A gzipped tar whose one file has a name of {@code length} bytes (a PAX record), made by hand: commons-compress's writer takes quadratic time on it. */
  private static byte[] longName(int length) throws IOException {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    try (OutputStream gz = new GZIPOutputStream(raw)) {
      String rec = " path=" + "d/".repeat(length / 2) + "\n";
      int total = rec.length() + Integer.toString(rec.length()).length();
      if (Integer.toString(total).length() != Integer.toString(rec.length()).length()) {
        total++;
      }
      byte[] pax = (total + rec).getBytes(StandardCharsets.UTF_8);
      gz.write(TarHeaders.header("PaxHeaders/x", 'x', pax.length));
      gz.write(pax);
      gz.write(new byte[(512 - pax.length % 512) % 512]);
      gz.write(TarHeaders.header("short", '0', 2));
      gz.write("hi".getBytes(StandardCharsets.US_ASCII));
      gz.write(new byte[510]);
      gz.write(new byte[1024]);
    }
    return raw.toByteArray();
  }

  @Test
  @DisplayName("entry names of 64 KiB and 10 MiB: each build fails within 60 s naming the 4096-byte cap, and the upload is removed")
  void longNames() throws Exception {
    for (int length : new int[] {64 * 1024, 10 * (int) MIB}) {
      byte[] tar = longName(length);
      String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(tar)); // never checked: refused first
      Requested r = request(server, unique("tpl-names"));
      upload(server, r, hash, tar);
      long t0 = System.nanoTime();
      List<JsonNode> log = new ArrayList<>();
      JsonNode done = build(server, r, copyOf(".", "/opt/", hash), log);
      assertThat(done.path("status").asText()).as("%s", messages(log)).isEqualTo("error");
      assertThat(done.path("reason").path("message").asText()).as("name of %d bytes", length).contains("4096 bytes");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(60));
      assertThat(present(r, hash)).as("the refused upload is gone").isFalse();
    }
  }

  @Test
  @DisplayName("an upload whose content is not what its hash says: the build fails saying so and the upload is removed; the right one then builds")
  void contentNotItsHash() throws Exception {
    String name = unique("tpl-hash");
    String[] real = {"app.txt", "the files the hash was made of " + UUID.randomUUID()};
    String[] forged = {"app.txt", "something else"};
    String hash = filesHash("app.txt", "/opt/app.txt", real);
    Requested r = request(server, name);
    upload(server, r, hash, gzippedTar(forged));
    List<JsonNode> log = new ArrayList<>();
    JsonNode done = build(server, r, copyOf("app.txt", "/opt/app.txt", hash), log);
    assertThat(done.path("status").asText()).as("%s", messages(log)).isEqualTo("error");
    assertThat(done.path("reason").path("message").asText()).contains("not what it says");
    assertThat(present(r, hash)).as("the forged upload is gone").isFalse();

    Requested again = request(server, name);
    assertThat(upload(server, again, hash, gzippedTar(real))).isTrue();
    List<JsonNode> log2 = new ArrayList<>();
    assertThat(build(server, again, copyOf("app.txt", "/opt/app.txt", hash), log2).path("status").asText()).as("%s", messages(log2))
        .isEqualTo("ready");
    call(server, "DELETE", "/templates/" + name, null);
  }

  @Test
  @DisplayName("uploads nothing refers to go after their bound (one a running build will use stays), and a restarted server removes every one")
  void orphanedUploads() throws Exception {
    String[] used = {"used.txt", "used " + UUID.randomUUID()};
    String[] orphan = {"orphan.txt", "orphan " + UUID.randomUUID()};
    String usedHash = filesHash("used.txt", "/opt/used.txt", used);
    String orphanHash = filesHash("orphan.txt", "/opt/orphan.txt", orphan);
    String name = unique("tpl-orphan");
    Requested r = request(server, name);
    upload(server, r, usedHash, gzippedTar(used));
    upload(server, r, orphanHash, gzippedTar(orphan));
    // a build whose COPY comes after a long RUN: its upload is referred to from the build's start
    ObjectNode body = Json.object().put("fromTemplate", "base");
    body.putArray("steps").add(step("RUN", "echo waiting-" + UUID.randomUUID() + "; sleep 8"))
        .add(step("COPY", "used.txt", "/opt/used.txt", "", "").put("filesHash", usedHash));
    assertThat(call(server, "POST", "/v2/templates/" + r.templateId() + "/builds/" + r.buildId(), body).status()).isEqualTo(202);
    await().atMost(Duration.ofMinutes(2)).until(() -> call(server, "GET", "/templates/" + r.templateId() + "/builds/" + r.buildId()
        + "/status", null).body().path("logEntries").findValuesAsText("message").stream().anyMatch(m -> m.contains("[stdout]: waiting-")));
    Instant later = Instant.now().plus(Duration.ofHours(2));
    server.templateBuilds().sweepUploadsForTesting(later);
    assertThat(uploadFiles()).contains(usedHash + ".tar").doesNotContain(orphanHash + ".tar");
    List<JsonNode> log = new ArrayList<>();
    JsonNode done = TemplateBuildTest.poll(server, r, log);
    assertThat(done.path("status").asText()).as("%s", messages(log)).isEqualTo("ready");
    // built: nothing refers to it any more, and past its bound it goes too
    server.templateBuilds().sweepUploadsForTesting(Instant.now().plus(Duration.ofHours(2)));
    assertThat(uploadFiles()).doesNotContain(usedHash + ".tar");
    call(server, "DELETE", "/templates/" + name, null);

    // a server's next start removes what its previous run left: here an upload for a build never started
    Path other = Files.createTempDirectory("sandboxes-tpl-orphan-");
    String id = "tpl-orphan-" + UUID.randomUUID().toString().substring(0, 8);
    try (LocalServer first = LocalServer.builder().serverId(id).stateDir(other).warmPool(0).build().start()) {
      upload(first, request(first, unique("tpl-left")), orphanHash, gzippedTar(orphan));
    }
    assertThat(other.resolve("template-files").resolve(orphanHash + ".tar")).exists();
    try (LocalServer second = LocalServer.builder().serverId(id).stateDir(other).warmPool(0).build().start()) {
      assertThat(other.resolve("template-files").resolve(orphanHash + ".tar")).doesNotExist();
      Requested again = request(second, unique("tpl-left"));
      assertThat(call(second, "GET", "/templates/" + again.templateId() + "/files/" + orphanHash, null).body().path("present").asBoolean())
          .isFalse();
    } finally {
      TestImages.removeMadeBy(id);
    }
  }

  @Test
  @DisplayName("a RUN step floods 120 MB of output: the build's log keeps at most 3 MiB and says it was cut, the step logs nothing on the host, the build goes on")
  void outputFlood() throws Exception {
    String name = unique("tpl-flood");
    Requested r = request(server, name);
    ObjectNode body = Json.object().put("fromTemplate", "base");
    body.putArray("steps").add(step("RUN", "echo flood-" + UUID.randomUUID() + "; yes \"$(head -c 3000 /dev/zero | tr '\\0' x)\""
        + " | head -n 40000; echo after-the-flood; sleep 3")).add(step("RUN", "echo next-step-ran"));
    assertThat(call(server, "POST", "/v2/templates/" + r.templateId() + "/builds/" + r.buildId(), body).status()).isEqualTo(202);
    // while the step runs: its container keeps no log on the host
    try (DockerRuntime docker = DockerRuntime.connect()) {
      Container step = await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100)).until(() -> docker.client()
          .listContainersCmd().withLabelFilter(Map.of("io.sandboxes.template-build-of", serverId)).exec().stream().findFirst()
          .orElse(null), java.util.Objects::nonNull);
      assertThat(docker.client().inspectContainerCmd(step.getId()).exec().getHostConfig().getLogConfig().getType().getType())
          .isEqualTo("none");
    }
    List<JsonNode> log = new ArrayList<>();
    JsonNode done = TemplateBuildTest.poll(server, r, log);
    assertThat(done.path("status").asText()).isEqualTo("ready");
    long bytes = log.stream().mapToLong(e -> e.path("message").asText().getBytes(StandardCharsets.UTF_8).length).sum();
    assertThat(bytes).as("bytes of the build's log").isLessThanOrEqualTo(3 * MIB);
    List<String> messages = messages(log);
    assertThat(messages).anyMatch(m -> m.startsWith("[builder 1/2] [stdout]: flood-")).anyMatch(m -> m.contains("the rest of it is not kept"))
        .anyMatch(m -> m.startsWith("[finalize] Finalizing template build [")).noneMatch(m -> m.endsWith("[stdout]: next-step-ran"));
    call(server, "DELETE", "/templates/" + name, null);
  }
}
