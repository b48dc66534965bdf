package io.sandboxes.template;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A build's status as one read of it answers, as E2B's {@code Template.getBuildStatus}: its state,
 * the log entries from the offset asked for (at most a page; ask again from
 * {@code offset + logEntries().size()} for the rest), and for a failed build the reason.
 *
 * @param templateId the template's id
 * @param buildId the build's id
 * @param state where the build is
 * @param logEntries the log entries of this page, in order
 * @param reason why it failed, or {@code null}
 * @since 0.1
 */
public record BuildStatus(String templateId, String buildId, State state, List<BuildLogEntry> logEntries, @Nullable Reason reason) {

  /** A build's states, E2B's four. */
  public enum State {
    /** Requested, not started yet (its files may still be uploading). */
    WAITING,
    /** Running its steps. */
    BUILDING,
    /** Finished: sandboxes can be created from it. */
    READY,
    /** Failed: {@link BuildStatus#reason()} says why. */
    ERROR;

    /**
     * Reads E2B's name of a state.
     *
     * @param wire {@code waiting}, {@code building}, {@code ready} or {@code error}
     * @return the state
     * @throws IllegalArgumentException for any other name: an unknown state is never taken for a known one
     */
    public static State of(String wire) {
      return switch (Objects.requireNonNull(wire, "wire")) {
        case "waiting" -> WAITING;
        case "building" -> BUILDING;
        case "ready" -> READY;
        case "error" -> ERROR;
        default -> throw new IllegalArgumentException("unknown build status '" + wire + "'");
      };
    }

    /**
     * Returns E2B's name of the state.
     *
     * @return the lower-case name
     */
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Why a build failed.
   *
   * @param message the server's reason, e.g. a RUN step's exit code
   * @param step the step that failed (E2B's numbering), or {@code null}
   * @param logEntries the log entries the server attached to the reason
   */
  public record Reason(String message, @Nullable String step, List<BuildLogEntry> logEntries) {

    /** Validates and copies the components. */
    public Reason {
      Objects.requireNonNull(message, "message");
      logEntries = List.copyOf(Objects.requireNonNull(logEntries, "logEntries"));
    }
  }

  /** Validates and copies the components. */
  public BuildStatus {
    Objects.requireNonNull(templateId, "templateId");
    Objects.requireNonNull(buildId, "buildId");
    Objects.requireNonNull(state, "state");
    logEntries = List.copyOf(Objects.requireNonNull(logEntries, "logEntries"));
  }

  /**
   * Tells whether the build has ended.
   *
   * @return true when {@link State#READY} or {@link State#ERROR}
   */
  public boolean finished() {
    return state == State.READY || state == State.ERROR;
  }
}
