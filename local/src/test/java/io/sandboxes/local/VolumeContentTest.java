package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.Volume;
import io.sandboxes.e2b.VolumeEntry;
import io.sandboxes.e2b.VolumeFileType;
import io.sandboxes.e2b.VolumePathNotFoundException;
import io.sandboxes.e2b.VolumeWriteOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * E2B's volume content API on the local server, through the Java client's {@link Volume}: files
 * written and read without a sandbox, seen by a sandbox that mounts the volume and the other way
 * round, and authorized by the volume's token (not the API key) as E2B's is.
 */
@ExtendWith(SharedServer.class)
class VolumeContentTest {

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  @DisplayName("write, read, list, makeDir, getInfo, updateMetadata, exists and remove without a sandbox; a sandbox mounting the volume sees the same files")
  void contentWithoutASandbox(E2BApi api) {
    String name = "content-" + UUID.randomUUID().toString().substring(0, 8);
    Volume v = api.volumes().create(name);
    try {
      VolumeEntry dir = v.makeDir("/docs/deep", VolumeWriteOptions.DEFAULTS.withForce(true));
      assertThat(dir.type()).isEqualTo(VolumeFileType.DIRECTORY);
      assertThat(dir.path()).isEqualTo("/docs/deep");
      assertThat(dir.mode()).as("E2B's default folder mode").isEqualTo(0777);
      assertThatThrownBy(() -> v.makeDir("/missing/parent")).isInstanceOf(VolumePathNotFoundException.class);

      VolumeEntry f = v.writeFile("/docs/a.txt", "hello from the content API");
      assertThat(f.type()).isEqualTo(VolumeFileType.FILE);
      assertThat(f.size()).isEqualTo(26);
      assertThat(f.mode()).isEqualTo(0666);
      assertThat(f.uid()).as("E2B's default owner").isEqualTo(9090);
      assertThat(v.readText("/docs/a.txt")).isEqualTo("hello from the content API");
      assertThatThrownBy(() -> v.writeFile("/docs/a.txt", "again")).as("an existing file needs force")
          .isInstanceOfSatisfying(io.sandboxes.SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(409));
      v.writeFile("/docs/a.txt", "replaced".getBytes(StandardCharsets.UTF_8), VolumeWriteOptions.DEFAULTS.withForce(true).withOwner(1000, 1000)
          .withMode(0640));
      VolumeEntry info = v.getInfo("/docs/a.txt");
      assertThat(info.size()).isEqualTo(8);
      assertThat(info.uid()).isEqualTo(1000);
      assertThat(info.mode()).isEqualTo(0640);
      byte[] big = new byte[3 * 1024 * 1024 + 17];
      new java.util.Random(7).nextBytes(big);
      v.writeFile("/big.bin", big);
      assertThat(v.readFile("/big.bin")).isEqualTo(big);

      assertThat(v.list("/").stream().map(VolumeEntry::path)).containsExactly("/big.bin", "/docs");
      assertThat(v.list("/", 3).stream().map(VolumeEntry::path)).containsExactly("/big.bin", "/docs", "/docs/a.txt", "/docs/deep");
      assertThat(v.updateMetadata("/docs/a.txt", VolumeWriteOptions.DEFAULTS.withMode(0600)).mode()).isEqualTo(0600);
      assertThatThrownBy(() -> v.readText("/nope")).isInstanceOf(VolumePathNotFoundException.class);
      assertThat(v.exists("/docs/deep")).isTrue();
      assertThat(v.exists("/nope")).isFalse();

      try (LiveSandbox s = api.create(SandboxSpec.defaults().withVolume(name, "/mnt/data"))) {
        assertThat(s.exec("sudo cat /mnt/data/docs/a.txt").stdout()).isEqualTo("replaced");
        s.exec("sudo sh -c 'echo -n from the sandbox > /mnt/data/docs/deep/b.txt'");
      }
      assertThat(v.readText("/docs/deep/b.txt")).isEqualTo("from the sandbox");

      v.remove("/docs");
      assertThat(v.exists("/docs/a.txt")).isFalse();
      assertThatThrownBy(() -> v.remove("/docs")).isInstanceOf(VolumePathNotFoundException.class);
      assertThatThrownBy(() -> v.remove("/")).isInstanceOfSatisfying(io.sandboxes.SandboxApiException.class,
          e -> assertThat(e.statusCode()).isEqualTo(400));
    } finally {
      assertThat(api.volumes().destroy(v.volumeId())).as("a volume read through its helper can still be deleted").isTrue();
    }
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("authorization is the volume's token: none or an unknown one is 401, another volume's is 403, the API key opens nothing")
  void authorization(LocalServer server, E2BApi api) throws Exception {
    Volume a = api.volumes().create("auth-a-" + UUID.randomUUID().toString().substring(0, 8));
    Volume b = api.volumes().create("auth-b-" + UUID.randomUUID().toString().substring(0, 8));
    try {
      String url = server.apiUrl() + "/volumecontent/" + a.volumeId() + "/path?path=%2F";
      assertThat(status(url, null)).isEqualTo(401);
      assertThat(status(url, "X-API-KEY:" + server.apiKey())).as("the API key is not the volume's token").isEqualTo(401);
      assertThat(status(url, "Authorization:Bearer not-a-token")).isEqualTo(401);
      assertThat(status(url, "Authorization:Bearer " + b.token())).isEqualTo(403);
      assertThat(status(url, "Authorization:Bearer " + a.token())).isEqualTo(200);
    } finally {
      api.volumes().destroy(a.volumeId());
      api.volumes().destroy(b.volumeId());
    }
  }

  private static int status(String url, String header) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(url)).GET();
    if (header != null) {
      int i = header.indexOf(':');
      r.header(header.substring(0, i), header.substring(i + 1));
    }
    return HttpClient.newHttpClient().send(r.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }
}
