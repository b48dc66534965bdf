package io.sandboxes.local.internal.runtime;

import io.sandboxes.local.internal.daemon.DaemonConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The server's end of one sandbox's daemon: how the daemon reaches the server is the runtime's
 * (a unix socket in a folder mounted into the container on Docker; TCP with a per-sandbox
 * credential elsewhere). The daemon connects out; the link hands over its connection.
 */
public interface DaemonLink extends AutoCloseable {

  /** @return what the sandbox's instance records so that a restarted server finds this link again */
  Map<String, String> labels();

  /** @return the daemon's connection now, or null when it is not connected */
  @Nullable DaemonConnection current();

  /**
   * Waits for the daemon's connection.
   *
   * @throws TimeoutException when none came in {@code timeout}
   */
  DaemonConnection await(Duration timeout) throws IOException, TimeoutException;

  /** Stops listening; the daemon's processes run on, and a restarted server takes them back. */
  @Override
  void close();

  /** Stops listening and removes what the link kept: the sandbox is gone. */
  void delete();
}
