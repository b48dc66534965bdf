package io.sandboxes.template;

import java.util.Objects;

/**
 * One copy of {@link Template#copyItems(java.util.List)}, as E2B's {@code CopyItem}: a source in the
 * context directory, where it goes, and its options.
 *
 * @param src a path relative to the context directory, inside it
 * @param dest where it goes in the image
 * @param options owner, mode and upload
 * @since 0.1
 */
public record CopyItem(String src, String dest, CopyOptions options) {

  /** Validates the components; the paths are checked as {@link Template#copy(String, String)} checks them. */
  public CopyItem {
    Objects.requireNonNull(src, "src");
    Objects.requireNonNull(dest, "dest");
    Objects.requireNonNull(options, "options");
  }

  /**
   * A copy with the default options.
   *
   * @param src a path relative to the context directory
   * @param dest where it goes in the image
   * @return the item
   */
  public static CopyItem of(String src, String dest) {
    return new CopyItem(src, dest, CopyOptions.defaults());
  }
}
