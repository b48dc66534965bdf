package io.sandboxes.local.internal.build;

import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/** One started build: its state, log and budget, and the steps and images it made or uses. */
final class Build {
  final TemplateService.Requested request;
  volatile String state = "waiting";
  final BuildLog log = new BuildLog();
  final BuildBudget budget;
  volatile @Nullable String reason;
  volatile @Nullable String reasonStep;
  volatile @Nullable Instant finishedAt;
  final Set<String> steps = ConcurrentHashMap.newKeySet();
  /** The step images this build committed, oldest first: removed when it does not finish. */
  final List<String> committed = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The cached step images this build goes on from: a failed build does not remove them meanwhile. */
  final Set<String> uses = ConcurrentHashMap.newKeySet();
  volatile boolean cancelled;

  Build(TemplateService.Requested request, BuildBudget budget) {
    this.request = request;
    this.budget = budget;
  }

  /** A line of the server's own (a step's heading, an outcome). */
  void log(String level, String message, @Nullable String step) {
    log.server(level, message, step);
  }

  /** A line a step's container printed. */
  void output(String level, String message, @Nullable String step) {
    log.output(level, message, step);
  }
}
