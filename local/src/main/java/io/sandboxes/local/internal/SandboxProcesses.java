package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sandbox's process table: processes started through its daemon (each in its own session and
 * process group, with its deadline), those a restarted server takes back from the daemon, their
 * signals and resizes, and how long a finished one stays known.
 */
final class SandboxProcesses {
  /** Logs under the sandbox's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(LocalSandbox.class);

  private final LocalSandbox sandbox;
  private final String id;
  private final OutsideFreeze freeze;
  private final ConcurrentMap<Integer, SandboxProcess> processes = new ConcurrentHashMap<>();
  /** How long a finished process's end is kept: {@link LocalSandbox#END_RETENTION}, shorter in some tests. */
  private volatile long retentionNanos = LocalSandbox.END_RETENTION.toNanos();
  /** The processes whose end is recorded, in the order they ended: {@link #pruneFinished} takes them from the front. */
  private final java.util.concurrent.ConcurrentLinkedQueue<SandboxProcess> ended = new java.util.concurrent.ConcurrentLinkedQueue<>();

  SandboxProcesses(LocalSandbox sandbox, OutsideFreeze freeze) {
    this.sandbox = sandbox;
    this.id = sandbox.id();
    this.freeze = freeze;
  }

  private RpcError unavailable(Exception e) {
    LOG.warn("a call into sandbox {} failed: {}", id, e.toString());
    return new RpcError("unavailable", "sandbox " + id + " could not be reached: " + e.getMessage());
  }

  /**
   * Starts a process and attaches {@code subscriber} before any output is pumped, so the starter
   * sees everything from the first byte.
   */
  SandboxProcess start(LocalSandbox.StartSpec spec, SandboxProcess.Subscriber[] subscriberOut) throws RpcError {
    pruneFinished();
    return startByDaemon(spec, subscriberOut);
  }

  /** Starts the process through the sandbox's daemon, in its own session and process group. */
  private SandboxProcess startByDaemon(LocalSandbox.StartSpec spec, SandboxProcess.Subscriber[] subscriberOut) throws RpcError {
    io.sandboxes.local.internal.daemon.DaemonConnection conn = sandbox.daemon();
    Map<String, String> env = new java.util.LinkedHashMap<>();
    for (String kv : sandbox.containerEnv()) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        env.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    sandbox.proxyVars().forEach((k, v) -> {
      if (!sandbox.envVars().containsKey(k)) {
        env.put(k, v);
      }
    });
    env.putAll(spec.envs());
    // E2B's identity variables, as its envd gives every process: the sandbox's own variables cannot
    // replace them, a command's own can
    sandbox.identityVars().forEach((k, v) -> {
      String asked = spec.envs().get(k);
      if (asked == null || asked.equals(sandbox.envVars().get(k))) {
        env.put(k, v);
      }
    });
    List<String> argv = new ArrayList<>();
    argv.add(spec.cmd());
    argv.addAll(spec.args());
    io.sandboxes.local.internal.daemon.ProcessSpec ps = new io.sandboxes.local.internal.daemon.ProcessSpec(argv, env,
        spec.cwd() == null || spec.cwd().isEmpty() ? null : spec.cwd(), spec.user(), spec.tag(), spec.stdin(),
        spec.pty() ? new io.sandboxes.local.internal.daemon.ProcessSpec.PtySize(spec.cols(), spec.rows()) : null);
    io.sandboxes.local.internal.daemon.DaemonProcess dp;
    try {
      // a start the caller was told failed (the sandbox froze) must not run on once it thaws
      dp = freeze.call(conn, c -> c.start(ps), SandboxProcesses::killOrphan);
    } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
      throw switch (e.kind()) {
        case UNKNOWN_USER -> new RpcError("unauthenticated", "invalid user: '" + spec.user() + "'");
        case INVALID -> e.getMessage() != null && e.getMessage().startsWith("cwd")
            ? new RpcError("invalid_argument", "cwd '" + spec.cwd() + "' does not exist or is not a directory")
            : new RpcError("invalid_argument", e.getMessage());
        case NOT_FOUND, PERMISSION -> new RpcError("not_found", "the process could not be started: " + e.getMessage());
        case DISCONNECTED -> unavailable(e);
        case TIMEOUT -> new RpcError("deadline_exceeded", "the process's start was not confirmed: " + e.getMessage());
        case LIMIT -> new RpcError("resource_exhausted", "the process could not be started: " + e.getMessage());
        default -> new RpcError("internal", "the process could not be started: " + e.getMessage());
      };
    } catch (IOException e) {
      throw unavailable(e);
    }
    int pid = (int) dp.pid();
    SandboxProcess process = new SandboxProcess(pid, spec.tag(), spec.cmd(), spec.args(), spec.envs(), spec.cwd(), spec.pty(), dp, ended::add);
    subscriberOut[0] = process.subscribe();
    processes.put(pid, process);
    Thread.ofVirtual().name("sandboxes-proc-" + id + "-" + pid).start(() -> process.pumpDaemon(lost));
    armDeadline(process, spec.timeout());
    return process;
  }

  /** A process started by a call given up (its sandbox froze from outside meanwhile): killed, and let go. */
  private static void killOrphan(io.sandboxes.local.internal.daemon.DaemonProcess p) {
    try {
      p.signal(9, true);
    } catch (IOException e) {
      LOG.debug("a process started by a call given up could not be killed: {}", e.toString());
    } finally {
      p.close();
    }
  }

  /**
   * envd's Connect-Timeout-Ms on Start: past it the stream fails and the process group is killed.
   * The timer ends with the process, so a finished command leaves no thread (holding the process
   * and its buffers) parked until a deadline that no longer matters.
   */
  private void armDeadline(SandboxProcess process, Duration timeout) {
    if (!timeout.isZero()) {
      Duration t = timeout;
      int pid = process.pid();
      Thread.ofVirtual().name("sandboxes-deadline-" + id + "-" + pid).start(() -> {
        try {
          if (process.awaitEnd(t)) {
            return;
          }
        } catch (InterruptedException e) {
          return;
        }
        if (process.end() == null) {
          process.deliver(new SandboxProcess.Failure("deadline_exceeded", "the process exceeded its deadline of " + t.toMillis() + " ms and was killed"));
          signal(process, 9);
        }
      });
    }
  }

  void resize(SandboxProcess p, int cols, int rows) throws RpcError {
    try {
      p.daemon().resize(cols, rows);
    } catch (IOException e) {
      throw new RpcError("failed_precondition", "process " + p.pid() + " could not be resized: " + e.getMessage());
    }
  }

  @Nullable SandboxProcess process(int pid) throws RpcError {
    pruneFinished();
    takeBackProcesses();
    return processes.get(pid);
  }

  @Nullable SandboxProcess processByTag(String tag) throws RpcError {
    pruneFinished();
    takeBackProcesses();
    return processes.values().stream().filter(p -> tag.equals(p.tag()) && p.end() == null).findFirst().orElse(null);
  }

  /** Breaks off every process stream attached to this sandbox: it is being removed. */
  void sever(String why) {
    processes.values().forEach(p -> p.sever(why));
  }

  /** @return the processes still running */
  Collection<SandboxProcess> running() throws RpcError {
    pruneFinished();
    takeBackProcesses();
    return processes.values().stream().filter(p -> p.end() == null).toList();
  }

  private volatile java.util.function.BooleanSupplier lost = () -> false;

  /**
   * Sets what a process's pump asks when the daemon's connection drops under it: whether the
   * whole sandbox turned out to be gone (and its streams were told so).
   */
  void onDaemonLost(java.util.function.BooleanSupplier lost) {
    this.lost = lost;
  }

  /** @return whether the whole sandbox turned out to be gone when the daemon's connection dropped */
  boolean daemonLost() {
    return lost.getAsBoolean();
  }

  /** Ends the stream of every process still running with {@code failure}: the sandbox is gone. */
  void abandon(SandboxProcess.Failure failure) {
    processes.values().forEach(p -> p.abandon(failure));
  }

  private volatile boolean processesToTakeBack;
  private final java.util.concurrent.locks.ReentrantLock takingBack = new java.util.concurrent.locks.ReentrantLock();

  /** This sandbox was taken back by a restarted server: its daemon's processes join the table on first use. */
  void takeBackLater() {
    this.processesToTakeBack = true;
  }

  /**
   * Attaches to every process the daemon runs that the table does not know (they were started
   * through the server before it restarted), so they are listed, attachable and signalable again.
   */
  private void takeBackProcesses() throws RpcError {
    if (!processesToTakeBack) {
      return;
    }
    takingBack.lock();
    try {
      if (!processesToTakeBack) {
        return;
      }
      io.sandboxes.local.internal.daemon.DaemonConnection conn = sandbox.daemon();
      java.util.Set<String> inherited = new java.util.HashSet<>(sandbox.containerEnv());
      try {
        for (io.sandboxes.local.internal.daemon.ProcessInfo info : freeze.call(conn,
            io.sandboxes.local.internal.daemon.DaemonConnection::processes, null)) {
          int pid = (int) info.pid();
          if (processes.containsKey(pid) || info.argv().isEmpty()) {
            continue;
          }
          Map<String, String> envs = new java.util.LinkedHashMap<>();
          for (String kv : info.env()) {
            int eq = kv.indexOf('=');
            // what every process gets from the container is not what the starter asked for
            if (eq > 0 && (!inherited.contains(kv) || sandbox.envVars().containsKey(kv.substring(0, eq)))
                && !sandbox.serverProxyVar(kv.substring(0, eq), kv.substring(eq + 1))
                && !kv.substring(eq + 1).equals(sandbox.identityVars().get(kv.substring(0, eq)))) {
              envs.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
          }
          io.sandboxes.local.internal.daemon.DaemonProcess dp;
          try {
            dp = freeze.call(conn, c -> c.attach(info.pid()), io.sandboxes.local.internal.daemon.DaemonProcess::close);
          } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
            LOG.debug("process {} of sandbox {} could not be taken back: {}", pid, id, e.toString());
            continue; // it ended meanwhile
          }
          SandboxProcess p = new SandboxProcess(pid, info.tag(), info.argv().get(0), info.argv().subList(1, info.argv().size()),
              envs, info.cwd(), info.pty(), dp, ended::add);
          processes.put(pid, p);
          Thread.ofVirtual().name("sandboxes-proc-" + id + "-" + pid).start(() -> p.pumpDaemon(lost));
        }
      } catch (IOException e) {
        throw unavailable(e);
      }
      processesToTakeBack = false;
    } finally {
      takingBack.unlock();
    }
  }

  /** Sends a signal to the process's whole group, as root inside the container. */
  void signal(SandboxProcess p, int signal) {
    try {
      p.daemon().signal(signal, true);
      return;
    } catch (IOException e) {
      LOG.debug("signal {} to the group of pid {} in sandbox {}: {}", signal, p.pid(), id, e.toString());
    }
    try {
      p.daemon().signal(signal, false); // the group is gone, or the leader left it: the process alone
    } catch (io.sandboxes.local.internal.daemon.DaemonException e) {
      if (e.kind() == io.sandboxes.local.internal.daemon.DaemonException.Kind.NOT_FOUND) {
        LOG.debug("signal {} to pid {} in sandbox {}: it had already ended", signal, p.pid(), id);
      } else {
        LOG.warn("signal {} to pid {} in sandbox {} failed: {}", signal, p.pid(), id, e.toString());
      }
    } catch (IOException e) {
      LOG.warn("signal {} to pid {} in sandbox {} failed: {}", signal, p.pid(), id, e.toString());
    }
  }

  /** For tests: keeps a finished process's end this long instead. */
  void retentionForTesting(Duration retention) {
    this.retentionNanos = retention.toNanos();
  }

  /**
   * Lets go of the processes that ended more than {@link LocalSandbox#END_RETENTION} ago, oldest
   * first, looking at no other: a sandbox that ran thousands of commands in the last half minute
   * does not make every start walk them all.
   */
  private void pruneFinished() {
    long now = System.nanoTime();
    for (SandboxProcess p = ended.peek(); p != null; p = ended.peek()) {
      if (now - p.finishedAtNanos() <= retentionNanos) {
        return;
      }
      if (ended.remove(p)) { // false: another caller pruning took it meanwhile
        processes.remove(p.pid(), p);
      }
    }
  }
}
