package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.runtime.DaemonLink;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One sandbox's in-sandbox daemon as the server holds it: the runtime's link to it (see
 * {@link DaemonLink}) and, through it, the daemon's current connection. Made when the sandbox is
 * created, opened again by a restarted server, closed when the sandbox is killed.
 */
public final class SandboxDaemon implements AutoCloseable {
  /** How long a call waits for the daemon to (re)connect: after a start, a resume or a restart. */
  static final Duration CONNECT = Duration.ofSeconds(20);

  private final DaemonLink link;
  private volatile @Nullable List<String> containerEnv;

  SandboxDaemon(DaemonLink link) {
    this.link = link;
  }

  /** @return the runtime's link to the daemon */
  DaemonLink link() {
    return link;
  }

  /** The current connection, when the daemon is connected now. */
  public @Nullable DaemonConnection current() {
    return link.current();
  }

  /**
   * The daemon's connection, waiting for it to come (back) for up to {@link #CONNECT}.
   *
   * @throws RpcError unavailable when no daemon connected in that time
   */
  public DaemonConnection connection() throws RpcError {
    try {
      return link.await(CONNECT);
    } catch (TimeoutException | IOException e) {
      throw new RpcError("unavailable", "the sandbox's daemon is not connected: " + e.getMessage());
    }
  }

  /** Waits for the daemon's first connection after a start. */
  void awaitConnected(Duration timeout) throws IOException, TimeoutException {
    link.await(timeout);
  }

  /** The environment the sandbox's instance was made with (the image's and the sandbox's), read once. */
  List<String> containerEnv(SandboxEngine engine, String instanceId) {
    List<String> env = containerEnv;
    if (env == null) {
      env = engine.environment(instanceId);
      containerEnv = env;
    }
    return env;
  }

  /**
   * Reads {@link #containerEnv} on a thread of its own, so that the sandbox's first command, which
   * starts from it, does not wait for the engine's inspect; a read that fails is made again then.
   */
  void readEnvironmentSoon(SandboxEngine engine, String instanceId) {
    Thread.ofVirtual().name("sandboxes-env-" + instanceId.substring(0, Math.min(12, instanceId.length()))).start(() -> {
      try {
        containerEnv(engine, instanceId);
      } catch (RuntimeException e) {
        // the first command reads it again and reports what fails then
      }
    });
  }

  /** Stops listening (the daemon's processes run on; a restarted server takes them back). */
  @Override
  public void close() {
    link.close();
  }

  /** Stops listening and removes what the link kept: the sandbox is gone. */
  void delete() {
    link.delete();
  }
}
