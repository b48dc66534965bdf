package io.sandboxes.local.contract;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.management.HotSpotDiagnosticMXBean;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The JVM's own list of live threads, virtual ones included, read from a thread dump
 * ({@link HotSpotDiagnosticMXBean#dumpThreads}) rather than from any counter the SDK keeps: what
 * "nothing left running" is checked against. The SDK's timers (watchdogs) and readers are
 * threads named after their sandbox, so a leak shows up here by name whether or not the SDK
 * counted the thread it started.
 */
final class LiveThreads {
  private LiveThreads() {}

  /**
   * The live threads whose name contains {@code sandboxId}, on both sides (the SDK and the local
   * server run in this JVM), by name. Fails rather than answering "none"
   * when the dump cannot show virtual threads at all.
   */
  static List<String> of(String sandboxId) {
    return find(sandboxId, false);
  }

  /**
   * As {@link #of}, leaving out the local server's own threads (those running its code, in
   * {@code io.sandboxes.local}): what the client left behind, each as its name and top frame.
   */
  static List<String> client(String sandboxId) {
    return find(sandboxId, true);
  }

  private static List<String> find(String sandboxId, boolean clientOnly) {
    String canaryName = "live-threads-canary-" + System.nanoTime();
    CountDownLatch stop = new CountDownLatch(1);
    Thread canary = Thread.ofVirtual().name(canaryName).start(() -> {
      try {
        stop.await();
      } catch (InterruptedException ignored) {
        // ends
      }
    });
    try {
      List<String> found = new ArrayList<>();
      boolean sawCanary = false;
      for (JsonNode container : dump().path("threadDump").path("threadContainers")) {
        for (JsonNode thread : container.path("threads")) {
          String name = thread.path("name").asText("");
          if (name.equals(canaryName)) {
            sawCanary = true;
            continue;
          }
          if (!name.contains(sandboxId)) {
            continue;
          }
          JsonNode stack = thread.path("stack");
          boolean server = false;
          for (JsonNode frame : stack) {
            server |= frame.asText().contains("io.sandboxes.local.");
          }
          if (!clientOnly) {
            found.add(name);
          } else if (!server) {
            found.add(name + " at " + (stack.isEmpty() ? "?" : stack.get(0).asText()));
          }
        }
      }
      if (!sawCanary) {
        throw new IllegalStateException("this JVM's thread dump does not list virtual threads: cannot look for leaked ones");
      }
      return found;
    } finally {
      stop.countDown();
      try {
        canary.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static JsonNode dump() {
    try {
      Path dir = Files.createTempDirectory("live-threads");
      Path file = dir.resolve("dump.json");
      try {
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
            .dumpThreads(file.toAbsolutePath().toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
        return Json.parse(Files.readAllBytes(file));
      } finally {
        Files.deleteIfExists(file);
        Files.deleteIfExists(dir);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
