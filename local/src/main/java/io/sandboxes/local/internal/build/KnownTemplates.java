package io.sandboxes.local.internal.build;

import org.jspecify.annotations.Nullable;

/**
 * What builds ask of the templates the server has besides built ones (the base template, the
 * code interpreter's, snapshots of sandboxes): the image a build may start from, and whether a
 * snapshot already holds a name a build wants.
 */
public interface KnownTemplates {
  /** The template every server has. */
  String BASE = "base";

  /**
   * @param templateId a template's id or name
   * @return the image it starts sandboxes from, or null when the server has no such template
   */
  @Nullable String resolve(String templateId);

  /**
   * @param name a template name a build asks for
   * @return whether a snapshot already holds it
   */
  boolean snapshotNamed(String name);
}
