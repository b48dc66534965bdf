package io.sandboxes.local.contract;

import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

/**
 * The JVM's own list of live threads, virtual ones included, read from the JDK's thread
 * containers (what its thread dumps list) rather than from any counter the SDK keeps: what
 * "nothing left running" is checked against. The SDK's timers (watchdogs) and readers are
 * threads named after their sandbox, so a leak shows up here by name whether or not the SDK
 * counted the thread it started.
 *
 * <p>Not through {@code HotSpotDiagnosticMXBean.dumpThreads}: on JDK 25.0.3 its snapshot of a
 * virtual thread that is mounting or unmounting crashed the whole test JVM (SIGSEGV in
 * {@code Continuation::is_continuation_entry_frame}), once in a full run. The containers are
 * read here directly (needs {@code --add-exports java.base/jdk.internal.vm=ALL-UNNAMED}, set in
 * this module's {@code argLine}), and each stack through {@link Thread#getStackTrace()}.
 */
final class LiveThreads {
  private LiveThreads() {}

  /**
   * The live threads whose name contains {@code sandboxId}, on both sides (the SDK and the local
   * server run in this JVM), by name. Fails rather than answering "none"
   * when the JVM's list cannot show virtual threads at all.
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
      for (Thread thread : all()) {
        String name = thread.getName();
        if (name.equals(canaryName)) {
          sawCanary = true;
          continue;
        }
        if (!name.contains(sandboxId) || !thread.isAlive()) {
          continue;
        }
        StackTraceElement[] stack = thread.getStackTrace();
        boolean server = false;
        for (StackTraceElement frame : stack) {
          server |= frame.getClassName().startsWith("io.sandboxes.local.");
        }
        if (!clientOnly) {
          found.add(name);
        } else if (!server) {
          found.add(name + " at " + (stack.length == 0 ? "?" : stack[0].toString()));
        }
      }
      if (!sawCanary) {
        throw new IllegalStateException("this JVM's thread containers do not list virtual threads: cannot look for leaked ones");
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

  /** Every thread in the JDK's tree of thread containers, from its root down. */
  @SuppressWarnings("unchecked")
  private static List<Thread> all() {
    try {
      Class<?> containers = Class.forName("jdk.internal.vm.ThreadContainers");
      Class<?> container = Class.forName("jdk.internal.vm.ThreadContainer");
      Method threads = container.getMethod("threads");
      Method children = container.getMethod("children");
      List<Thread> all = new ArrayList<>();
      Deque<Object> left = new ArrayDeque<>();
      left.push(containers.getMethod("root").invoke(null));
      while (!left.isEmpty()) {
        Object c = left.pop();
        ((Stream<Thread>) threads.invoke(c)).forEach(all::add);
        ((Stream<Object>) children.invoke(c)).forEach(left::push);
      }
      return all;
    } catch (ReflectiveOperationException | IllegalAccessError e) {
      throw new IllegalStateException("cannot read the JVM's thread containers (is jdk.internal.vm exported to this test?)", e);
    }
  }
}
