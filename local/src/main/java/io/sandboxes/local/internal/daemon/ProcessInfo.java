package io.sandboxes.local.internal.daemon;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A running process in the daemon's table.
 *
 * @param env the variables given at start (not the ones the daemon adds)
 */
public record ProcessInfo(long pid, @Nullable String tag, boolean pty, boolean stdinOpen, List<String> argv,
    List<String> env, String cwd) {}
