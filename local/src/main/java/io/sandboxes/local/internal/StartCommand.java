package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.StructuredLog;
import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.daemon.DaemonConnection;
import io.sandboxes.local.internal.daemon.DaemonException;
import io.sandboxes.local.internal.daemon.DaemonProcess;
import io.sandboxes.local.internal.daemon.PortStream;
import io.sandboxes.local.internal.daemon.ProcessSpec;
import io.sandboxes.local.internal.runtime.CodeInterpreterTemplate;
import io.sandboxes.local.internal.runtime.SandboxEngine;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A template's start command: a service a sandbox runs from its start on (the code interpreter's
 * bridge), named by the image's {@value CodeInterpreterTemplate#LABEL_START} label. It runs as the
 * user the {@value CodeInterpreterTemplate#LABEL_START_USER} label names ({@code user} when none;
 * the code interpreter's is root, as E2B's) in {@code /home/user}, its output appended to {@value #LOG_FILE} in the sandbox, and a
 * create returns once the port it serves accepts connections, as E2B's start commands are waited
 * for. It is started again when it fails (see {@link #SUPERVISOR}). Images without the label
 * (base, snapshots of base) start nothing.
 */
final class StartCommand {
  private static final Logger LOG = LoggerFactory.getLogger(StartCommand.class);
  /** The start command's output, inside the sandbox. */
  static final String LOG_FILE = "/tmp/.sandboxes-start.log";
  /** How long a start command may take to serve its port (the kernel's first start is most of it). */
  static final Duration READY = Duration.ofSeconds(90);
  private static final Duration POLL = Duration.ofMillis(50);
  private static final ConcurrentMap<String, Optional<StartCommand>> BY_IMAGE = new ConcurrentHashMap<>();

  /** The variable the supervising shell reads the command from (shell-quoted), so its own command line does not name it. */
  static final String COMMAND_VARIABLE = "SANDBOXES_START_COMMAND";
  /**
   * Runs the command again a second after it fails, as E2B's systemd units do
   * ({@code Restart=on-failure}): killed, or ended with a status other than 0, while an end by
   * SIGHUP, SIGINT, SIGPIPE or SIGTERM (129, 130, 141, 143) is a stop, as systemd counts them. A
   * command that fails three times in a row within 5 s of its start each time is left ended, so a
   * broken one fails the create in seconds rather than at the ready deadline. The
   * command is given in {@value #COMMAND_VARIABLE} (which the service does not inherit), so a kill
   * by the command's name ({@code pkill -f bridge.py}) finds the service and not this loop.
   */
  static final String SUPERVISOR = "c=$" + COMMAND_VARIABLE + "; unset " + COMMAND_VARIABLE + "; n=0; while :; do t=$(date +%s); /bin/sh -c \"exec $c\" >>" + LOG_FILE
      + " 2>&1; s=$?; case $s in 0|129|130|141|143) exit $s;; esac; "
      + "if [ $(($(date +%s) - t)) -lt 5 ]; then n=$((n + 1)); else n=0; fi; [ $n -ge 3 ] && exit $s; "
      + "echo \"start command ended ($s); starting it again\" >>" + LOG_FILE + "; sleep 1; done";

  private final List<String> argv;
  private final int port;
  private final String user;

  private StartCommand(List<String> argv, int port, String user) {
    this.argv = List.copyOf(argv);
    this.port = port;
    this.user = user;
  }

  /** The user an image's label names, when it is a plain user name; {@code user} otherwise. */
  static String user(Map<String, String> labels) {
    String named = labels.get(CodeInterpreterTemplate.LABEL_START_USER);
    return named != null && named.matches("[a-z_][a-z0-9_-]{0,31}") ? named : "user";
  }

  /** The words as one shell command line, each in single quotes. */
  static String quoted(List<String> words) {
    StringBuilder b = new StringBuilder();
    for (String w : words) {
      if (b.length() > 0) {
        b.append(' ');
      }
      b.append('\'').append(w.replace("'", "'\\''")).append('\'');
    }
    return b.toString();
  }

  /** The start command an image names, read once per image. */
  static Optional<StartCommand> of(SandboxEngine engine, String image) {
    return BY_IMAGE.computeIfAbsent(image, i -> {
      Map<String, String> labels;
      try {
        labels = engine.imageLabels(i);
      } catch (RuntimeException e) {
        LOG.warn("could not read image {}'s labels; it starts no service: {}", i, e.toString());
        return Optional.empty();
      }
      String raw = labels.get(CodeInterpreterTemplate.LABEL_START);
      if (raw == null || raw.isBlank()) {
        return Optional.empty();
      }
      try {
        JsonNode node = Json.parse(raw.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        List<String> argv = new ArrayList<>();
        node.forEach(n -> argv.add(n.asText()));
        return argv.isEmpty() ? Optional.empty() : Optional.of(new StartCommand(argv, CodeInterpreterTemplate.PORT, user(labels)));
      } catch (IOException e) {
        LOG.warn("image {} has an unreadable {} label: {}", i, CodeInterpreterTemplate.LABEL_START, raw);
        return Optional.empty();
      }
    });
  }

  /**
   * Starts the command in a sandbox and waits until its port accepts a connection.
   *
   * @param containerEnv the container's environment, which the service inherits
   * @throws IOException when it could not start, ended, or did not serve its port in time
   */
  void run(DaemonConnection conn, List<String> containerEnv, String sandboxId) throws IOException, TimeoutException {
    Map<String, String> env = new LinkedHashMap<>();
    for (String kv : containerEnv) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        env.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    env.put("HOME", user.equals("root") ? "/root" : "/home/" + user);
    env.put(COMMAND_VARIABLE, quoted(argv));
    List<String> sh = List.of("/bin/sh", "-c", SUPERVISOR);
    long started = System.nanoTime();
    DaemonProcess p = conn.start(new ProcessSpec(sh, env, "/home/user", user, "start-command", false, null));
    try {
      long deadline = started + READY.toNanos();
      while (true) {
        try (PortStream ps = conn.connectPort(port)) {
          StructuredLog.atInfo(LOG).addKeyValue("event", "start-command.ready").addKeyValue("sandbox", sandboxId).addKeyValue("port", port)
              .addKeyValue("ms", (System.nanoTime() - started) / 1_000_000).log("the template's start command serves its port");
          return;
        } catch (DaemonException e) {
          if (e.kind() != DaemonException.Kind.REFUSED) {
            throw e;
          }
        }
        if (p.exit().isDone()) {
          throw new IOException("the template's start command " + argv + " ended (" + p.exit().join()
              + ") before serving port " + port + "; its output is in " + LOG_FILE + " in the sandbox");
        }
        if (System.nanoTime() > deadline) {
          throw new TimeoutException("the template's start command " + argv + " did not serve port " + port + " within "
              + READY.toSeconds() + " s; its output is in " + LOG_FILE + " in the sandbox");
        }
        try {
          Thread.sleep(POLL);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while waiting for the start command", e);
        }
      }
    } finally {
      p.close(); // detached: it runs on with the sandbox
    }
  }
}
