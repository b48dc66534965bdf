package io.sandboxes.template;

import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Template} holds, as one value: its base, its context directory and what is
 * ignored under it, its steps, its start and ready commands, and whether the next steps skip the
 * server's cache. Each {@code with...} method returns a copy with one part changed.
 */
record TemplateParts(@Nullable String fromImage, @Nullable String fromTemplate, @Nullable RegistryCredentials registry, Path contextDir,
    List<String> ignorePatterns, List<TemplateStep> steps, @Nullable String startCmd, @Nullable String readyCmd,
    boolean skipCacheFromHere) {

  TemplateParts {
    ignorePatterns = List.copyOf(ignorePatterns);
    steps = List.copyOf(steps);
  }

  /** A base with no steps, read from the working directory. */
  static TemplateParts base(@Nullable String fromImage, @Nullable String fromTemplate, @Nullable RegistryCredentials registry) {
    return new TemplateParts(fromImage, fromTemplate, registry, Path.of("").toAbsolutePath().normalize(), List.of(), List.of(), null,
        null, false);
  }

  TemplateParts withSteps(List<TemplateStep> newSteps) {
    return new TemplateParts(fromImage, fromTemplate, registry, contextDir, ignorePatterns, newSteps, startCmd, readyCmd,
        skipCacheFromHere);
  }

  TemplateParts withContextDir(Path dir) {
    return new TemplateParts(fromImage, fromTemplate, registry, dir, ignorePatterns, steps, startCmd, readyCmd, skipCacheFromHere);
  }

  TemplateParts withIgnorePatterns(List<String> patterns) {
    return new TemplateParts(fromImage, fromTemplate, registry, contextDir, patterns, steps, startCmd, readyCmd, skipCacheFromHere);
  }

  TemplateParts withCommands(@Nullable String start, @Nullable String ready) {
    return new TemplateParts(fromImage, fromTemplate, registry, contextDir, ignorePatterns, steps, start, ready, skipCacheFromHere);
  }

  TemplateParts skippingCache() {
    return new TemplateParts(fromImage, fromTemplate, registry, contextDir, ignorePatterns, steps, startCmd, readyCmd, true);
  }
}
