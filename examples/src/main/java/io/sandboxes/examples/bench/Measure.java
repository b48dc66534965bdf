package io.sandboxes.examples.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** The benchmarks' shared timing: medians after a warm-up, and throughput of parallel runs. */
final class Measure {
  private Measure() {}

  /** One measured operation. */
  interface Op {
    void run() throws Exception;
  }

  /** Runs {@code op} a few times to warm up, then {@code n} times, and returns the median in ms. */
  static double medianMs(int n, Op op) throws Exception {
    for (int i = 0; i < Math.max(3, n / 10); i++) {
      op.run();
    }
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      op.run();
      ms.add((System.nanoTime() - t) / 1e6);
    }
    return median(ms);
  }

  static double median(List<Double> samples) {
    List<Double> s = new ArrayList<>(samples);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }

  /** The nearest-rank {@code p}th percentile of {@code samples} (p in 1..100). */
  static double percentile(List<Double> samples, double p) {
    List<Double> s = new ArrayList<>(samples);
    Collections.sort(s);
    return s.get(Math.max(0, Math.min(s.size() - 1, (int) Math.ceil(s.size() * p / 100) - 1)));
  }

  /** Runs {@code total} operations, {@code parallel} at a time, and returns operations per second. */
  static double perSecond(int total, int parallel, Op op) throws Exception {
    for (int i = 0; i < parallel; i++) {
      op.run();
    }
    try (ExecutorService pool = Executors.newFixedThreadPool(parallel)) {
      long t = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        done.add(pool.submit(() -> {
          op.run();
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      return total / ((System.nanoTime() - t) / 1e9);
    }
  }

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }

  /** Prints one figure beside its raw baseline, with the ratio. */
  static void row(String what, double raw, double ours) {
    System.out.printf("%-50s %12.2f %12.2f %7.2fx%n", what, raw, ours, ours / raw);
  }

  static void header(String ours) {
    System.out.printf("%-50s %12s %12s %8s%n", "figure (median; same run)", "raw docker", ours, "ratio");
  }

  /** Prints one figure beside its raw baseline, with the ratio and the target it is held to. */
  static void row(String what, double raw, double ours, String target) {
    System.out.printf("%-58s %10.2f %10.2f %7.2fx   %s%n", what, raw, ours, ours / raw, target);
  }

  /** Prints a figure that has no raw baseline, with the target it is held to. */
  static void oursOnly(String what, double ours, String target) {
    System.out.printf("%-58s %10s %10.2f %8s   %s%n", what, "-", ours, "-", target);
  }

  /** The header of {@link #row(String, double, double, String)}'s table. */
  static void targetHeader(String ours) {
    System.out.printf("%-58s %10s %10s %8s   %s%n", "figure (same run)", "raw docker", ours, "ratio", "target");
  }
}
