package io.sandboxes.e2b;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A process running in a sandbox, as the sandbox's daemon lists it ({@link Commands#list()}, E2B's
 * {@code commands.list()}): what was started, not what the process later made of itself. A command
 * started with {@link Commands#start} or {@code exec} shows as {@code /bin/bash} with the
 * arguments {@code -l -c <command>}.
 *
 * @param pid its process id inside the sandbox
 * @param tag the tag it was started with, or {@code null} when it has none
 * @param cmd the program started
 * @param args its arguments
 * @param envs the environment variables of its start, as the daemon reports them (E2B's lists
 *     those the start request gave)
 * @param cwd its working directory when one was given at start, or {@code null}
 * @since 0.1
 */
public record ProcessInfo(int pid, @Nullable String tag, String cmd, List<String> args, Map<String, String> envs,
    @Nullable String cwd) {

  /** Validates and copies the components. */
  public ProcessInfo {
    if (pid <= 0) {
      throw new IllegalArgumentException("a process id is positive, got " + pid);
    }
    Objects.requireNonNull(cmd, "cmd");
    args = List.copyOf(Objects.requireNonNull(args, "args"));
    envs = Map.copyOf(Objects.requireNonNull(envs, "envs"));
  }
}
