package io.sandboxes.local.internal.build;

/** A step failed: the build stops with this message, naming the step. */
final class StepFailed extends Exception {
  private static final long serialVersionUID = 1L;
  final String step;

  StepFailed(String step, String message) {
    super(message);
    this.step = step;
  }
}
