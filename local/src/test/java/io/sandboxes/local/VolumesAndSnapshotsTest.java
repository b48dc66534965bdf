package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.VolumeMount;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.SnapshotInfo;
import io.sandboxes.e2b.SnapshotPage;
import io.sandboxes.e2b.SnapshotQuery;
import io.sandboxes.e2b.VolumeInfo;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Volumes (Docker volumes) and snapshots (filesystem captures as templates) on the local server. */
@ExtendWith(SharedServer.class)
class VolumesAndSnapshotsTest {

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @Test
  @DisplayName("a volume's data outlives the sandbox that wrote it; names are unique; a mounted volume cannot be deleted")
  void volumeSurvivesSandbox(E2BApi e2b) {
    String name = unique("vol");
    VolumeInfo vol = e2b.createVolume(name);
    assertThat(vol.name()).isEqualTo(name);
    assertThatThrownBy(() -> e2b.createVolume(name))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(409));
    assertThat(e2b.listVolumes()).contains(vol);
    assertThat(e2b.getVolume(vol.volumeId())).contains(vol);

    try (LiveSandbox writer = e2b.create(SandboxSpec.defaults().withVolume(name, "/workspace"))) {
      writer.exec("echo 'made by the first sandbox' > /workspace/notes.txt").orThrow();
      assertThat(e2b.info(writer.id()).volumeMounts()).containsExactly(new VolumeMount(name, "/workspace"));
      assertThatThrownBy(() -> e2b.deleteVolume(vol.volumeId()))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(409));
    }
    try (LiveSandbox reader = e2b.create(SandboxSpec.defaults().withVolume(name, "/data/app"))) {
      assertThat(reader.readFile("/data/app/notes.txt")).isEqualTo("made by the first sandbox\n");
      assertThat(reader.exec("stat -c %U /data/app").stdout()).isEqualTo("user\n");
    }
    assertThat(e2b.deleteVolume(vol.volumeId())).isTrue();
    assertThat(e2b.getVolume(vol.volumeId())).isEmpty();
    assertThat(e2b.deleteVolume(vol.volumeId())).isFalse();
    assertThatThrownBy(() -> e2b.create(SandboxSpec.defaults().withVolume(name, "/workspace")))
        .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
  }

  @Test
  @DisplayName("a snapshot captures the filesystem while the sandbox runs on; it is a template; in use it cannot be deleted, and its name taken again adds a new build while the older one's sandboxes keep theirs")
  void snapshotAsTemplate(E2BApi e2b) throws Exception {
    String name = unique("snap");
    try (LiveSandbox source = e2b.create()) {
      source.writeFile("/home/user/state.txt", "version 1");
      SnapshotInfo snap = e2b.createSnapshot(source.id(), name);
      assertThat(snap.snapshotId()).isEqualTo(name + ":default");
      assertThat(source.exec("echo still running").stdout()).isEqualTo("still running\n");
      assertThat(e2b.listSnapshots(source.id(), null)).extracting(SnapshotInfo::snapshotId).contains(snap.snapshotId());
      assertThat(e2b.listSnapshots(null, name)).extracting(SnapshotInfo::snapshotId).containsExactly(snap.snapshotId());

      String newerId;
      try (LiveSandbox child = e2b.create(SandboxSpec.of(snap.snapshotId()))) {
        assertThat(child.readFile("/home/user/state.txt")).isEqualTo("version 1");
        assertThat(e2b.info(child.id()).templateId()).isEqualTo(snap.snapshotId());
        assertThatThrownBy(() -> e2b.deleteTemplate(snap.snapshotId()))
            .isInstanceOfSatisfying(SandboxApiException.class, e -> {
              assertThat(e.statusCode()).isEqualTo(409);
              assertThat(e.getMessage()).contains(child.id());
            });
        child.pause();
        assertThatThrownBy(() -> e2b.deleteTemplate(snap.snapshotId()))
            .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.getMessage()).contains("paused"));
        // E2B: the name taken again adds a build; the name now means it, the paused child keeps its own
        source.writeFile("/home/user/state.txt", "version 2");
        SnapshotInfo again = e2b.createSnapshot(source.id(), name);
        assertThat(again.snapshotId()).isEqualTo(snap.snapshotId());
        assertThat(e2b.listSnapshots(null, name)).extracting(SnapshotInfo::snapshotId).containsExactly(snap.snapshotId());
        try (LiveSandbox newer = e2b.create(SandboxSpec.of(name))) {
          newerId = newer.id();
          assertThat(newer.readFile("/home/user/state.txt")).isEqualTo("version 2");
          assertThat(containersOf(newerId)).as("the newer build's sandbox's container, found by its label").isEqualTo(1);
        }
        child.resume();
        assertThat(child.readFile("/home/user/state.txt")).isEqualTo("version 1");
        assertThat(snapshotImages(snap.snapshotId())).as("both builds, the older one held by its sandbox").isEqualTo(2);
      }
      // its last sandbox gone, the older build goes too
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> snapshotImages(snap.snapshotId()) == 1);

      // a kill answers before its container is removed (the removal may wait up to 5 s for the
      // callers' calls to pause): the build the killed sandbox used is free once that is done
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> containersOf(newerId) == 0);
      source.writeFile("/home/user/state.txt", "version 3");
      SnapshotInfo replaced = e2b.createSnapshot(source.id(), name);
      assertThat(replaced.snapshotId()).isEqualTo(snap.snapshotId());
      assertThat(e2b.listSnapshots(null, name)).hasSize(1);
      assertThat(snapshotImages(snap.snapshotId())).as("an older build nothing uses goes at once").isEqualTo(1);
      try (LiveSandbox child = e2b.create(SandboxSpec.of(name))) {
        assertThat(child.readFile("/home/user/state.txt")).isEqualTo("version 3");
      }
      assertThat(e2b.deleteTemplate(snap.snapshotId())).isTrue();
      assertThat(e2b.deleteTemplate(snap.snapshotId())).isFalse();
      assertThat(e2b.listSnapshots(null, name)).isEmpty();
      assertThatThrownBy(() -> e2b.create(SandboxSpec.of(snap.snapshotId())))
          .isInstanceOfSatisfying(SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
    }
  }

  @Test
  @DisplayName("a superseded build several sandboxes hold goes once they are all killed at the same moment, round after round: a removal that ends while another's sweep runs sweeps again")
  void supersededBuildGoesWithSandboxesKilledTogether(E2BApi e2b) throws Exception {
    String name = unique("held");
    try (LiveSandbox source = e2b.create()) {
      SnapshotInfo snap = e2b.createSnapshot(source.id(), name);
      try {
        for (int round = 1; round <= 3; round++) {
          java.util.List<LiveSandbox> children = new java.util.ArrayList<>();
          for (int i = 0; i < 4; i++) {
            children.add(e2b.create(SandboxSpec.of(name)));
          }
          e2b.createSnapshot(source.id(), name);
          assertThat(snapshotImages(snap.snapshotId())).as("round %d: the superseded build is held by its sandboxes", round).isEqualTo(2);
          // their removals run side by side and end close together: each one's sweep finds the build
          // still in use by the others, and the last one's must still find it free
          try (var killers = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (LiveSandbox child : children) {
              killers.submit(child::close);
            }
          }
          int r = round;
          org.awaitility.Awaitility.await("round " + r + ": the superseded build goes after its last sandbox")
              .atMost(java.time.Duration.ofSeconds(30)).until(() -> snapshotImages(snap.snapshotId()) == 1);
        }
      } finally {
        e2b.deleteTemplate(snap.snapshotId());
      }
    }
  }

  /** @return how many containers, running or not, belong to this sandbox */
  private static int containersOf(String sandboxId) {
    try (io.sandboxes.local.internal.docker.DockerRuntime docker = io.sandboxes.local.internal.docker.DockerRuntime.connect()) {
      return docker.client().listContainersCmd().withShowAll(true)
          .withLabelFilter(java.util.Map.of("io.sandboxes.sandbox-id", sandboxId)).exec().size();
    }
  }

  /** @return how many images (builds) carry this snapshot id */
  private static int snapshotImages(String snapshotId) throws Exception {
    try (io.sandboxes.local.internal.docker.DockerRuntime docker = io.sandboxes.local.internal.docker.DockerRuntime.connect()) {
      return docker.client().listImagesCmd().withLabelFilter(java.util.Map.of("io.sandboxes.snapshot-id", snapshotId)).exec().size();
    }
  }

  @Test
  @DisplayName("a sandbox's snapshots page by page from its handle, as E2B's sandbox.listSnapshots({limit, nextToken}), and all at once")
  void snapshotPages(E2BApi e2b) {
    try (LiveSandbox source = e2b.create()) {
      String firstName = unique("page");
      SnapshotInfo first = source.snapshot(firstName);
      SnapshotInfo second = source.snapshot(unique("page"));
      try {
        SnapshotPage one = source.listSnapshots(SnapshotQuery.all().withLimit(1));
        assertThat(one.items()).hasSize(1);
        assertThat(one.hasNext()).isTrue();
        SnapshotPage two = source.listSnapshots(SnapshotQuery.all().withLimit(1).withNextToken(one.nextTokenValue()));
        assertThat(two.items()).hasSize(1);
        assertThat(two.hasNext()).as("two snapshots of this sandbox, one a page").isFalse();
        assertThat(java.util.stream.Stream.concat(one.items().stream(), two.items().stream()).map(SnapshotInfo::snapshotId))
            .containsExactlyInAnyOrder(first.snapshotId(), second.snapshotId());
        assertThat(source.listSnapshots()).extracting(SnapshotInfo::snapshotId)
            .containsExactlyInAnyOrder(first.snapshotId(), second.snapshotId());
        assertThat(e2b.listSnapshots(SnapshotQuery.all().withName(firstName).withLimit(5)).items())
            .extracting(SnapshotInfo::snapshotId).containsExactly(first.snapshotId());
        assertThatThrownBy(() -> SnapshotQuery.all().withLimit(101)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SnapshotQuery.all().withNextToken("")).isInstanceOf(IllegalArgumentException.class);
      } finally {
        e2b.deleteTemplate(first.snapshotId());
        e2b.deleteTemplate(second.snapshotId());
      }
    }
  }

  @Test
  @DisplayName("an image of ours whose snapshot labels are not whole (another version's, or half-made) is passed over: listings still answer")
  void halfLabelledImageIgnored(E2BApi e2b) throws Exception {
    try (io.sandboxes.local.internal.docker.DockerRuntime docker = io.sandboxes.local.internal.docker.DockerRuntime.connect()) {
      String name = "sandboxes-half-labelled-" + UUID.randomUUID().toString().substring(0, 8);
      String container = docker.client().createContainerCmd(io.sandboxes.local.internal.docker.BaseImage.reference()).withName(name)
          .withCmd("true").withLabels(java.util.Map.of(io.sandboxes.local.internal.docker.DockerRuntime.LABEL_OURS, "true")).exec().getId();
      String image = null;
      try {
        // a snapshot id but no name, and a creation time that is not one
        image = docker.client().commitCmd(container).withRepository("sandboxes-local/half-labelled").withTag(name.substring(name.length() - 8))
            .withLabels(java.util.Map.of(io.sandboxes.local.internal.docker.DockerRuntime.LABEL_OURS, "true",
                "io.sandboxes.snapshot-id", "half-" + name, "io.sandboxes.snapshot-created", "yesterday"))
            .exec();
        String half = "half-" + name;
        assertThat(e2b.listSnapshots(null, null)).extracting(SnapshotInfo::snapshotId).doesNotContain(half);
      } finally {
        docker.remove(container);
        if (image != null) {
          docker.client().removeImageCmd(image).withForce(true).exec();
        }
      }
    }
  }
}
