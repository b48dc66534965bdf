package io.sandboxes.local;

import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Image;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Removes the images a test server made (snapshots, fork images, built templates and their step
 * images), found by the labels that name that server: a test that failed midway left them, and
 * nothing else would. Images of other servers on the same engine are not touched.
 */
final class TestImages {
  private TestImages() {}

  static final List<String> LABELS = List.of(DockerRuntime.LABEL_SERVER, "io.sandboxes.template-built-by",
      "io.sandboxes.template-step-server");

  /** @return how many images were removed */
  static int removeMadeBy(String serverId) {
    int removed = 0;
    try (DockerRuntime d = DockerRuntime.connect()) {
      for (String label : LABELS) {
        List<Image> images = d.client().listImagesCmd().withShowAll(true).withLabelFilter(Map.of(label, serverId)).exec().stream()
            .sorted(Comparator.comparing(Image::getCreated).reversed()).toList();
        for (Image i : images) {
          try {
            d.client().removeImageCmd(i.getId()).withForce(true).exec();
            removed++;
          } catch (NotFoundException gone) {
            // went with a child, or by the server
          } catch (RuntimeException e) {
            System.err.println("test cleanup: image " + i.getId() + " of server " + serverId + " stays: " + e.getMessage());
          }
        }
      }
    }
    return removed;
  }
}
