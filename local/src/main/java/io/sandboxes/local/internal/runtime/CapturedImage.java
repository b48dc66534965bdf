package io.sandboxes.local.internal.runtime;

import java.util.Map;

/**
 * An image this server made: a sandbox's filesystem captured for its forks, or a template.
 *
 * @param id the runtime's id of the image
 * @param labels what the server recorded on it
 */
public record CapturedImage(String id, Map<String, String> labels) {
  /** Copies the labels. */
  public CapturedImage {
    labels = Map.copyOf(labels);
  }
}
