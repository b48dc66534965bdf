package io.sandboxes.e2b;

import java.util.List;
import java.util.Objects;

/**
 * A snapshot of a sandbox: a template new sandboxes can be created from.
 *
 * @param snapshotId its id, usable as a template id, e.g. {@code my-snap:default}
 * @param names the names it is known by
 * @since 0.1
 */
public record SnapshotInfo(String snapshotId, List<String> names) {

  /** Validates and copies the components. */
  public SnapshotInfo {
    Objects.requireNonNull(snapshotId, "snapshotId");
    names = List.copyOf(Objects.requireNonNull(names, "names"));
  }
}
