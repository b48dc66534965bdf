package io.sandboxes.local.internal.runtime;

import java.util.List;
import java.util.Map;

/**
 * A sandbox instance the runtime lists.
 *
 * @param id the runtime's id of it
 * @param names its names in the runtime's own listings, bare (as {@link InstanceSpec#name} gave them)
 * @param labels what it records about itself
 */
public record Instance(String id, List<String> names, Map<String, String> labels) {
  /** Copies the names and labels. */
  public Instance {
    names = List.copyOf(names);
    labels = Map.copyOf(labels);
  }
}
