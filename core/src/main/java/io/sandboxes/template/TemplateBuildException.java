package io.sandboxes.template;

import io.sandboxes.SandboxException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A template build ended in {@code error}, or did not end within its timeout. Carries the
 * server's reason (for a failing RUN it names the exit code), the step it failed at, and the log
 * read up to then.
 *
 * @since 0.1
 */
public final class TemplateBuildException extends SandboxException {
  private static final long serialVersionUID = 1L;

  /** The template's id. */
  private final String templateId;
  /** The failed build's id. */
  private final String buildId;
  /** The server's reason. */
  private final String reason;
  /** The step it failed at, when known. */
  private final @Nullable String step;
  /** The log read so far; not serialized. */
  private final transient List<BuildLogEntry> logs;

  /**
   * Creates the exception; its message names the template, the step and the reason.
   *
   * @param name the alias being built
   * @param templateId the template's id
   * @param buildId the build's id
   * @param reason the server's reason, or what kept the build from finishing
   * @param step the step it failed at, or {@code null} when unknown
   * @param logs the log entries read so far, in order
   */
  public TemplateBuildException(String name, String templateId, String buildId, String reason, @Nullable String step,
      List<BuildLogEntry> logs) {
    super("template build of " + name + " failed" + (step == null ? "" : " at step " + step) + ": " + reason);
    this.templateId = templateId;
    this.buildId = buildId;
    this.reason = reason;
    this.step = step;
    this.logs = List.copyOf(logs);
  }

  /**
   * Returns the template's id.
   *
   * @return the id of the template whose build failed
   */
  public String templateId() {
    return templateId;
  }

  /**
   * Returns the build's id.
   *
   * @return the id of the failed build
   */
  public String buildId() {
    return buildId;
  }

  /**
   * Returns why the build failed, as the server said it.
   *
   * @return the reason, e.g. {@code step 2 failed with exit code 3}
   */
  public String reason() {
    return reason;
  }

  /**
   * Returns the step the build failed at.
   *
   * @return {@code base}, a step's number from 1 in the template's order, {@code finalize}, or
   *     {@code null} when the server did not say
   */
  public @Nullable String step() {
    return step;
  }

  /**
   * Returns the build's log up to the failure.
   *
   * @return every log entry read, in order (empty after deserialization)
   */
  public List<BuildLogEntry> logs() {
    return logs == null ? List.of() : logs;
  }
}
