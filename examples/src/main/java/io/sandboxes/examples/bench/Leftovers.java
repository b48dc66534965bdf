package io.sandboxes.examples.bench;

import io.sandboxes.local.internal.docker.DockerRuntime;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * What a benchmark made and has not removed yet: the servers, clients and processes it opened,
 * and its raw baseline containers (labelled {@link RawDocker#LABEL_BASELINE} with this JVM's
 * {@link RawDocker#RUN}). Closing it removes them all, and so does a JVM shutdown hook, so that
 * Ctrl-C or a failure midway leaves nothing running (a server's close kills its sandboxes).
 */
final class Leftovers implements AutoCloseable {
  private final Deque<AutoCloseable> open = new ConcurrentLinkedDeque<>();
  private final Thread hook = new Thread(this::removeAll, "bench-leftovers");
  /** Set once removal began; the benchmark's own threads still run while the hook does. */
  private volatile boolean closing;

  Leftovers() {
    Runtime.getRuntime().addShutdownHook(hook);
    // for a run ended by SIGKILL, which no hook sees
    System.out.println("raw baseline containers of this run are labelled " + RawDocker.LABEL_BASELINE + "=" + RawDocker.RUN);
  }

  /** Keeps {@code c} to close at the end, after whatever was kept later. */
  <T extends AutoCloseable> T keep(T c) {
    open.push(c);
    return c;
  }

  /** Starts a raw baseline container ({@link RawDocker#spec()}); the end removes it if {@link #removeRaw} did not. */
  String startRaw(DockerRuntime docker) {
    if (closing) {
      throw new IllegalStateException("the benchmark is ending");
    }
    return docker.createAndStart(RawDocker.spec());
  }

  /** Removes a raw container that {@link #startRaw} made. */
  void removeRaw(DockerRuntime docker, String id) {
    docker.remove(id);
  }

  @Override
  public void close() {
    removeAll();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down: the hook runs or ran
    }
  }

  private synchronized void removeAll() {
    closing = true;
    AutoCloseable c;
    while ((c = open.poll()) != null) {
      try {
        c.close();
      } catch (Exception e) {
        System.err.println("could not close " + c + ": " + e);
      }
    }
    // the clients are closed, so no new container can be asked for; one whose create was already
    // under way may still appear, hence a sweep by label until one finds nothing a second later
    try (DockerRuntime docker = DockerRuntime.connect()) {
      for (int sweep = 0; sweep < 10; sweep++) {
        // ids only: docker-java's types are shaded inside the local runtime's jar
        List<String> left = docker.client().listContainersCmd().withShowAll(true)
            .withLabelFilter(Map.of(RawDocker.LABEL_BASELINE, RawDocker.RUN)).exec().stream().map(k -> k.getId()).toList();
        List<String> failed = new java.util.ArrayList<>();
        for (String id : left) {
          try {
            docker.remove(id);
          } catch (RuntimeException e) {
            failed.add(id.substring(0, 12) + ": " + e);
          }
        }
        if (left.isEmpty() && sweep > 0) {
          return;
        }
        if (!failed.isEmpty()) {
          System.err.println("removing raw baseline containers failed: " + failed);
        }
        Thread.sleep(1_000);
      }
      System.err.println("raw baseline containers labelled " + RawDocker.LABEL_BASELINE + "=" + RawDocker.RUN
          + " kept appearing: remove them by that label");
    } catch (RuntimeException e) {
      System.err.println("could not sweep raw baseline containers labelled " + RawDocker.LABEL_BASELINE + "=" + RawDocker.RUN
          + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
