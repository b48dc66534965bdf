package io.sandboxes.local.internal.build;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One template build's log, as its status pages it: held to a bounded size whatever its steps
 * print. The steps' output (what a RUN prints) is kept up to {@link #MAX_OUTPUT_LINES} lines and
 * {@link #MAX_OUTPUT_BYTES} bytes, then one entry says the rest was dropped; the server's own
 * lines (each step's heading, its outcome, the build's) have a reserve of their own beyond that,
 * so a flood never hides why a build failed. Each line is at most {@link #MAX_LINE} characters.
 */
final class BuildLog {
  /** The most lines of the steps' output one build keeps. */
  static final int MAX_OUTPUT_LINES = 20_000;
  /** The most bytes (UTF-8) of the steps' output one build keeps. */
  static final long MAX_OUTPUT_BYTES = 2L << 20;
  /** The server's own lines kept beyond the output's limit, and their bytes. */
  static final int MAX_SERVER_LINES = 2_000;
  static final long MAX_SERVER_BYTES = 1L << 20;
  /** The longest a line is; a longer one is cut. */
  static final int MAX_LINE = 4096;

  private final List<TemplateService.LogEntry> entries = new ArrayList<>();
  private int outputLines;
  private long outputBytes;
  private boolean outputCut;
  private int serverLines;
  private long serverBytes;
  private boolean serverCut;
  private @Nullable String dropped;

  private static String cut(String message) {
    return message.length() > MAX_LINE ? message.substring(0, MAX_LINE) + "…" : message;
  }

  /** A line a step printed. */
  synchronized void output(String level, String message, @Nullable String step) {
    if (outputCut || dropped != null) {
      return;
    }
    String m = cut(message);
    long bytes = SafeTar.utf8Length(m);
    if (outputLines >= MAX_OUTPUT_LINES || outputBytes + bytes > MAX_OUTPUT_BYTES) {
      outputCut = true;
      entries.add(new TemplateService.LogEntry(Instant.now(), "warn", "the build's output passed the log's limit of " + MAX_OUTPUT_LINES
          + " lines or " + (MAX_OUTPUT_BYTES >> 20) + " MiB: the rest of it is not kept (the build goes on)", step));
      return;
    }
    outputLines++;
    outputBytes += bytes;
    entries.add(new TemplateService.LogEntry(Instant.now(), level, m, step));
  }

  /** A line of the server's own: a step's heading, an outcome. */
  synchronized void server(String level, String message, @Nullable String step) {
    if (serverCut || dropped != null) {
      return;
    }
    String m = cut(message);
    long bytes = SafeTar.utf8Length(m);
    if (serverLines >= MAX_SERVER_LINES || serverBytes + bytes > MAX_SERVER_BYTES) {
      serverCut = true;
      entries.add(new TemplateService.LogEntry(Instant.now(), "warn", "the build's log passed its limit: later lines are not kept", step));
      return;
    }
    serverLines++;
    serverBytes += bytes;
    entries.add(new TemplateService.LogEntry(Instant.now(), level, m, step));
  }

  /** Lets go of the entries (an old finished build), leaving one saying why. */
  synchronized void drop(String why) {
    if (dropped == null) {
      dropped = why;
      entries.clear();
      entries.add(new TemplateService.LogEntry(Instant.now(), "info", why, null));
    }
  }

  /** @return entries from {@code offset} on, at most {@code limit} */
  synchronized List<TemplateService.LogEntry> page(int offset, int limit) {
    int from = Math.min(Math.max(offset, 0), entries.size());
    return List.copyOf(entries.subList(from, Math.min(entries.size(), from + limit)));
  }

  /** @return the last {@code n} entries of a step */
  synchronized List<TemplateService.LogEntry> lastOf(String step, int n) {
    List<TemplateService.LogEntry> of = new ArrayList<>();
    for (TemplateService.LogEntry e : entries) {
      if (step.equals(e.step())) {
        of.add(e);
      }
    }
    return List.copyOf(of.subList(Math.max(0, of.size() - n), of.size()));
  }
}
