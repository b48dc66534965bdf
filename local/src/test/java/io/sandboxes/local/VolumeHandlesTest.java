package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.VolumeMount;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.E2BVolumes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.Volume;
import io.sandboxes.e2b.VolumeNotFoundException;
import io.sandboxes.e2b.VolumePathNotFoundException;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link E2BVolumes} against the local server: volumes with their tokens, connected by id and by
 * name, listed, mounted into a sandbox by name and destroyed. The volume content API is E2B's
 * cloud's (tested against a scripted server in core); here a content call must fail loudly.
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

      assertThatThrownBy(() -> created.exists("/")).as("the local server serves no volume content: a failure, never 'absent'")
          .isInstanceOf(SandboxApiException.class).isNotInstanceOf(VolumePathNotFoundException.class);

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
