package io.sandboxes;

import org.jspecify.annotations.Nullable;

/**
 * How a spawned process ended.
 *
 * @param exitCode its exit code; -1 when it was ended by a signal or its outcome is unknown, never
 *     0 unless it was observed to exit 0
 * @param error the reason it did not exit 0 (e.g. {@code signal: killed}, or the stream's error), or null
 * @since 0.1
 */
public record ProcessExit(int exitCode, @Nullable String error) {}
