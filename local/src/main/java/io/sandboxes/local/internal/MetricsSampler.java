package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandboxes' resource use over time: a background sampler that reads every running sandbox
 * about every {@link #SAMPLE_EVERY}, and the samples a metrics request gets (a fresh one first
 * when the newest is old).
 */
final class MetricsSampler implements AutoCloseable {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private final Map<String, LocalSandbox> sandboxes;
  /** The sampler's source of CPU and memory, read from outside each sandbox (disk comes from its daemon). */
  private final SandboxEngine engine;
  private final Thread sampler;

  /** Starts sampling the sandboxes of {@code sandboxes} (the live table, read each round). */
  MetricsSampler(Map<String, LocalSandbox> sandboxes, SandboxEngine engine) {
    this.sandboxes = sandboxes;
    this.engine = engine;
    this.sampler = Thread.ofVirtual().name("sandboxes-metrics").start(this::run);
  }

  /** How often each running sandbox's resource use is sampled (E2B's is every few seconds too). */
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(5);
  /**
   * A sandbox's metric samples from {@code start} to {@code end} (Unix seconds, both included),
   * oldest first. When the range reaches the present and the newest sample is older than the
   * sampling interval (a sandbox just made, or many sandboxes to sample), a fresh one is taken
   * first; a paused sandbox gets none while paused.
   */
  List<Metrics.Sample> metrics(LocalSandbox s, long start, long end) throws RpcError {
    if (!s.paused() && end >= Instant.now().getEpochSecond() - 1) {
      sampleIfOlderThan(s, SAMPLE_EVERY);
    }
    return s.samples(start, end);
  }

  /**
   * Takes a sample unless the newest is younger than {@code age}; one sampling of a sandbox at a
   * time, so the sampler and a request never add two samples of the same moment.
   *
   * <p>Only the look at the sandbox (running, not paused) and the host's cgroup files are read
   * under its transition lock, so a kill, pause or resume never waits on the sandbox's daemon;
   * the disk reading asks the daemon after, within {@link Metrics#DISK_ANSWER}.
   */
  private void sampleIfOlderThan(LocalSandbox s, Duration age) throws RpcError {
    s.sampling.lock();
    try {
      Metrics.Sample previous = s.lastSample();
      if (previous != null && previous.at().isAfter(Instant.now().minus(age))) {
        return;
      }
      // a sandbox being killed, paused or resumed is skipped this time rather than waited for long
      boolean quiet;
      try {
        quiet = s.transitions.tryLock(2, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (!quiet) {
        return;
      }
      SandboxEngine.Usage usage;
      io.sandboxes.local.internal.daemon.DaemonConnection daemon;
      try {
        if (s.paused() || s.frozenFromOutside() || !sandboxes.containsKey(s.id())) {
          return;
        }
        usage = Metrics.usage(engine, s);
        daemon = s.daemonNow();
      } finally {
        s.transitions.unlock();
      }
      s.addSample(Metrics.sample(s, usage, Metrics.disk(s, daemon)));
    } finally {
      s.sampling.unlock();
    }
  }

  /** Samples every running sandbox about every {@link #SAMPLE_EVERY}, one at a time, so the load stays bounded. */
  private void run() {
    while (!Thread.currentThread().isInterrupted()) {
      Instant round = Instant.now();
      for (LocalSandbox s : List.copyOf(sandboxes.values())) {
        if (s.paused() || !sandboxes.containsKey(s.id())) {
          continue;
        }
        try {
          sampleIfOlderThan(s, SAMPLE_EVERY.minusMillis(500));
        } catch (RpcError | RuntimeException e) {
          // a sandbox that is going, or pausing, has no sample this round
          LOG.debug("sampling sandbox {} failed: {}", s.id(), e.getMessage());
        }
      }
      engine.retainUsage(sandboxes.values().stream().map(LocalSandbox::instanceId).collect(java.util.stream.Collectors.toSet()));
      Duration rest = SAMPLE_EVERY.minus(Duration.between(round, Instant.now()));
      try {
        Thread.sleep(rest.isNegative() ? Duration.ofMillis(100) : rest);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Stops the sampler. */
  @Override
  public void close() {
    sampler.interrupt();
  }
}
