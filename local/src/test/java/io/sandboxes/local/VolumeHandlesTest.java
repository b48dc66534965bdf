package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxSpec;
import io.sandboxes.VolumeMount;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.E2BVolumes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.Volume;
import io.sandboxes.e2b.VolumeNotFoundException;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link E2BVolumes} against the local server: volumes with their tokens, connected by id and by
 * name, listed, mounted into a sandbox by name and destroyed. The volume content API is served
 * too (VolumeContentTest); here only that the volume's own content calls reach it.
 */
@ExtendWith(SharedServer.class)
class VolumeHandlesTest {

  @Test
  @DisplayName("create gives a volume with its token; connect by id or name gives the same; it mounts by name; destroy ends it")
  void volumeHandles(E2BSandboxProvider provider) {
    E2BApi e2b = provider.api();
    E2BVolumes volumes = e2b.volumes();
    String name = "vh-" + UUID.randomUUID().toString().substring(0, 8);
    Volume created = volumes.create(name);
    assertThat(created.name()).isEqualTo(name);
    assertThat(created.token()).isNotBlank();
    assertThat(created.domain()).isNull();
    if (System.getenv(E2BVolumes.VOLUME_API_URL_ENV) == null) {
      assertThat(created.contentUrl()).isEqualTo(provider.apiUrl());
    }
    try {
      Volume byId = volumes.connect(created.volumeId());
      assertThat(byId.name()).isEqualTo(name);
      assertThat(byId.token()).isEqualTo(created.token());
      assertThat(volumes.getInfo(created.volumeId()).token()).isEqualTo(created.token());
      assertThat(volumes.connectByName(name).volumeId()).isEqualTo(created.volumeId());
      assertThat(volumes.list()).contains(created.info());

      assertThat(created.exists("/")).as("the volume content API is served, with the volume's token (VolumeContentTest)").isTrue();

      try (LiveSandbox s = e2b.create(SandboxSpec.defaults().withVolume(byId.name(), "/mnt/v"))) {
        s.exec("echo kept > /mnt/v/f.txt").orThrow();
        assertThat(e2b.info(s.id()).volumeMounts()).containsExactly(new VolumeMount(name, "/mnt/v"));
      }
    } finally {
      assertThat(volumes.destroy(created.volumeId())).isTrue();
    }
    assertThat(volumes.destroy(created.volumeId())).isFalse();
    assertThatThrownBy(() -> volumes.connect(created.volumeId()))
        .isInstanceOfSatisfying(VolumeNotFoundException.class, e -> assertThat(e.volumeId()).isEqualTo(created.volumeId()));
    assertThatThrownBy(() -> volumes.connectByName(name)).isInstanceOf(VolumeNotFoundException.class);
  }
}
