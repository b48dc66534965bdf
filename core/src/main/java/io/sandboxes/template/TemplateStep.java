package io.sandboxes.template;

import java.util.List;
import java.util.Objects;

/**
 * One step of a {@link Template} as E2B's build API receives it: a type, its arguments, and
 * whether the server must rebuild it rather than take it from its cache.
 *
 * <p>The arguments are E2B's: {@code RUN [command]} or {@code [command, user]}; {@code COPY [src,
 * dest, user, mode]} (empty strings for "the user in effect" and "the files' own mode");
 * {@code ENV [key, value, key, value...]}; {@code WORKDIR [path]}; {@code USER [name]}.
 *
 * @param type the step's type
 * @param args its arguments, in E2B's order
 * @param force true to rebuild this step even when the server has it cached
 * @param forceUpload for {@code COPY}: true to upload the files even when the server has them
 * @since 0.1
 */
public record TemplateStep(Type type, List<String> args, boolean force, boolean forceUpload) {

  /** The five step types E2B's build API knows. */
  public enum Type {
    /** Files from the build's context directory, placed in the image. */
    COPY,
    /** Environment variables for the steps after it and for the template's sandboxes. */
    ENV,
    /** A shell command, run as the user in effect or as the step's own user. */
    RUN,
    /** The working directory for the steps after it and for the template's sandboxes. */
    WORKDIR,
    /** The user for the steps after it and for the template's sandboxes. */
    USER
  }

  /** Validates and copies the components. */
  public TemplateStep {
    Objects.requireNonNull(type, "type");
    args = List.copyOf(Objects.requireNonNull(args, "args"));
    if (forceUpload && type != Type.COPY) {
      throw new IllegalArgumentException("forceUpload applies to COPY steps only, not " + type);
    }
  }
}
