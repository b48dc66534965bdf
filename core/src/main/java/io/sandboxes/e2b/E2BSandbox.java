package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.Utf8Accumulator;
import io.sandboxes.e2b.internal.Watchdog;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A live E2B sandbox. Commands and files go to the sandbox's daemon (envd); lifecycle calls go to
 * the control plane. {@link #close()} kills the sandbox.
 *
 * <p>Thread-safe: several commands may run at once on one handle.
 *
 * @since 0.1
 */
public final class E2BSandbox implements Sandbox {

  /** Extra time the client waits past a command's own deadline for the daemon to report it. */
  static final Duration DEADLINE_GRACE = Duration.ofSeconds(10);

  private final E2BApi provider;
  private final String id;
  private final @Nullable String templateId;
  private final @Nullable String envdVersion;
  private final Envd envd;
  private final AtomicBoolean closed = new AtomicBoolean();

  E2BSandbox(E2BApi provider, String id, @Nullable String templateId, @Nullable String envdVersion, Envd envd) {
    this.provider = provider;
    this.id = id;
    this.templateId = templateId;
    this.envdVersion = envdVersion;
    this.envd = envd;
  }

  @Override
  public String id() {
    return id;
  }

  /** @return the template the sandbox was created from, when the server said */
  public @Nullable String templateId() {
    return templateId;
  }

  /** @return the version of the sandbox's daemon, when the server said */
  public @Nullable String envdVersion() {
    return envdVersion;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The command runs as {@code /bin/bash -l -c <command>}. Its deadline is sent to the daemon,
   * which kills it when the deadline passes; that surfaces as a {@link io.sandboxes.SandboxRpcException}
   * with code {@code deadline_exceeded}. A stream that ends without an exit report throws: an
   * outcome that was not observed is never reported as a result.
   */
  @Override
  public ExecResult exec(String command, ExecOptions options) {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(options, "options");
    long started = System.nanoTime();
    ObjectNode process = Json.object().put("cmd", "/bin/bash");
    process.putArray("args").add("-l").add("-c").add(command);
    if (!options.env().isEmpty()) {
      process.set("envs", Json.toObject(options.env()));
    }
    if (options.cwd() != null) {
      process.put("cwd", options.cwd());
    }
    ObjectNode body = Json.object();
    body.set("process", process);
    body.put("stdin", false);

    String context = "exec in sandbox " + id;
    Utf8Accumulator stdout = new Utf8Accumulator();
    Utf8Accumulator stderr = new Utf8Accumulator();
    JsonNode end = null;
    boolean sawStart = false;
    try (ConnectStream stream = envd.stream("process.Process/Start", body, options.user(), options.timeout(), context, null);
         Watchdog ignored = options.timeout().isZero() ? null : Watchdog.arm(options.timeout().plus(DEADLINE_GRACE), stream::close)) {
      JsonNode message;
      while ((message = stream.next()) != null) {
        JsonNode event = message.path("event");
        if (event.has("start")) {
          sawStart = true;
        } else if (event.has("data")) {
          JsonNode data = event.get("data");
          if (data.has("stdout")) {
            stdout.feed(Base64.getDecoder().decode(data.get("stdout").asText()));
          } else if (data.has("stderr")) {
            stderr.feed(Base64.getDecoder().decode(data.get("stderr").asText()));
          } else if (data.has("pty")) {
            stdout.feed(Base64.getDecoder().decode(data.get("pty").asText()));
          }
        } else if (event.has("end")) {
          end = event.get("end");
        }
      }
    }
    if (!sawStart) {
      throw new SandboxException(context + ": the daemon never reported the process as started");
    }
    if (end == null) {
      throw new SandboxException(context + ": the process stream ended without an exit report");
    }
    stdout.finish();
    stderr.finish();
    return new ExecResult(exitCode(end), stdout.text(), stderr.text(), Duration.ofNanos(System.nanoTime() - started));
  }

  /**
   * envd omits {@code exitCode} when it is 0 (proto3 defaults are left out), so a missing code is
   * 0 only when the process is reported as having exited; a process ended by a signal reports -1.
   */
  static int exitCode(JsonNode end) {
    if (end.has("exitCode")) {
      return Json.intValue(end, "exitCode", -1);
    }
    return end.path("exited").asBoolean(false) ? 0 : -1;
  }

  @Override
  public void writeBytes(String path, byte[] content) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(content, "content");
    envd.writeFile(path, content, null);
  }

  @Override
  public byte[] readBytes(String path) {
    Objects.requireNonNull(path, "path");
    return envd.readFile(path, null);
  }

  /** @return what the control plane says about this sandbox now */
  public SandboxInfo info() {
    return provider.info(id);
  }

  /**
   * Sets the sandbox to end {@code timeout} from now.
   *
   * @param timeout positive
   */
  public void setTimeout(Duration timeout) {
    provider.setTimeout(id, timeout);
  }

  /**
   * Pauses the sandbox, keeping its memory and processes. {@link E2BSandboxProvider#connect}
   * resumes it; until then its daemon does not answer.
   *
   * @return true when it is paused now, false when it already was
   */
  public boolean pause() {
    return provider.pause(id, true);
  }

  /**
   * Kills the sandbox now.
   *
   * @return true when it was killed, false when it was already gone
   */
  public boolean kill() {
    closed.set(true);
    return provider.kill(id);
  }

  /** Kills the sandbox; a sandbox already gone is not an error. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      provider.kill(id);
    }
  }

  @Override
  public String toString() {
    return "E2BSandbox[" + id + "]";
  }
}
