package io.sandboxes.local.internal.build;

/** A step failed: the build stops with this message, naming the step. */
final class StepFailed extends Exception {
  private static final long serialVersionUID = 1L;
  final String step;
  /** The step could not start because its user is not in the image's passwd file. */
  final boolean unknownUser;

  StepFailed(String step, String message) {
    this(step, message, false);
  }

  StepFailed(String step, String message, boolean unknownUser) {
    super(message);
    this.step = step;
    this.unknownUser = unknownUser;
  }
}
