package io.sandboxes;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What sandbox to create: its template, how long it may live, its default environment and its
 * metadata. Immutable; each {@code with...} method returns a copy and validates its argument.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=sandbox-spec :
 * SandboxSpec spec = SandboxSpec.of("base")
 *     .withTimeout(Duration.ofMinutes(10))
 *     .withMetadata(Map.of("team", "infra"));
 * }
 *
 * @param template template id or alias, e.g. {@code "base"}
 * @param timeout how long the sandbox lives before the server kills it (whole seconds are sent)
 * @param env environment variables every process in the sandbox gets
 * @param metadata string labels stored with the sandbox and usable as a listing filter
 * @param onTimeout what happens when the timeout passes: kill (default) or pause
 * @param autoResume whether a paused sandbox resumes by itself when it is called (only with a
 *     memory-keeping {@link OnTimeout#PAUSE})
 * @param volumes named volumes to mount, each at its own path
 * @param network the sandbox's network, sent in the create request; null for the server's default
 * @since 0.1
 */
public record SandboxSpec(String template, Duration timeout, Map<String, String> env, Map<String, String> metadata,
    OnTimeout onTimeout, boolean autoResume, java.util.List<VolumeMount> volumes,
    @Nullable SandboxNetwork network) {

  /** The template E2B and the local runtime use when none is named. */
  public static final String DEFAULT_TEMPLATE = "base";

  /**
   * The code interpreter's template, as E2B's code-interpreter SDKs name it; the local runtime
   * serves it too. Its sandboxes answer {@link Sandbox#runCode(String)}.
   */
  public static final String CODE_INTERPRETER_TEMPLATE = "code-interpreter-v1";

  /** E2B's default sandbox lifetime: 5 minutes. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

  private static final Pattern TEMPLATE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/-]*");

  /** Validates and copies the components. */
  public SandboxSpec {
    Objects.requireNonNull(template, "template");
    if (!TEMPLATE.matcher(template).matches()) {
      throw new IllegalArgumentException("template must be an id or alias like 'base', got '" + template + "'");
    }
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be positive, got " + timeout);
    }
    env = Map.copyOf(Objects.requireNonNull(env, "env"));
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    Objects.requireNonNull(onTimeout, "onTimeout");
    volumes = java.util.List.copyOf(Objects.requireNonNull(volumes, "volumes"));
    if (volumes.stream().map(VolumeMount::path).distinct().count() != volumes.size()) {
      throw new IllegalArgumentException("two volumes are mounted at the same path: " + volumes);
    }
    if (autoResume && onTimeout != OnTimeout.PAUSE) {
      throw new IllegalArgumentException("autoResume needs onTimeout PAUSE (a memory-keeping pause), got " + onTimeout);
    }
  }

  /**
   * A spec with the server's default network.
   *
   * @param template template id or alias
   * @param timeout the sandbox's lifetime, positive
   * @param env default environment of every process
   * @param metadata labels stored with the sandbox
   * @param onTimeout what happens at the timeout
   * @param autoResume whether a paused sandbox resumes when called; needs {@link OnTimeout#PAUSE}
   * @param volumes named volumes to mount
   */
  public SandboxSpec(String template, Duration timeout, Map<String, String> env, Map<String, String> metadata,
      OnTimeout onTimeout, boolean autoResume, java.util.List<VolumeMount> volumes) {
    this(template, timeout, env, metadata, onTimeout, autoResume, volumes, null);
  }

  /**
   * Returns the default spec.
   *
   * @return template {@code base}, 5 minutes, no env, no metadata, killed at the timeout
   */
  public static SandboxSpec defaults() {
    return of(DEFAULT_TEMPLATE);
  }

  /**
   * Returns a spec for a template, with the defaults otherwise.
   *
   * @param template template id or alias
   * @return a spec for it with the defaults otherwise
   */
  public static SandboxSpec of(String template) {
    return new SandboxSpec(template, DEFAULT_TIMEOUT, Map.of(), Map.of(), OnTimeout.KILL, false, java.util.List.of());
  }

  /**
   * Returns a copy for another template.
   *
   * @param template template id or alias
   * @return a copy with it
   */
  public SandboxSpec withTemplate(String template) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, volumes, network);
  }

  /**
   * Returns a copy with this lifetime.
   *
   * @param timeout the sandbox's lifetime, positive
   * @return a copy with it
   */
  public SandboxSpec withTimeout(Duration timeout) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, volumes, network);
  }

  /**
   * Returns a copy with this environment, replacing the one set before.
   *
   * @param env default environment of every process
   * @return a copy with it
   */
  public SandboxSpec withEnv(Map<String, String> env) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, volumes, network);
  }

  /**
   * Returns a copy with this metadata, replacing what was set before.
   *
   * @param metadata labels stored with the sandbox
   * @return a copy with them
   */
  public SandboxSpec withMetadata(Map<String, String> metadata) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, volumes, network);
  }

  /**
   * Returns a copy with this timeout behaviour; anything but {@link OnTimeout#PAUSE} also turns
   * auto-resume off.
   *
   * @param onTimeout what happens at the timeout
   * @return a copy with it
   */
  public SandboxSpec withOnTimeout(OnTimeout onTimeout) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume && onTimeout == OnTimeout.PAUSE, volumes, network);
  }

  /**
   * Returns a copy that also mounts a volume, after the ones already added.
   *
   * @param volume the name of an existing volume
   * @param mountPath where to mount it, an absolute path
   * @return a copy that also mounts it
   */
  public SandboxSpec withVolume(String volume, String mountPath) {
    java.util.List<VolumeMount> more = new java.util.ArrayList<>(volumes);
    more.add(new VolumeMount(volume, mountPath));
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, more, network);
  }

  /**
   * Returns a copy that does, or does not, resume by itself when called while paused.
   *
   * @param autoResume whether a paused sandbox resumes when called; needs {@link OnTimeout#PAUSE}
   * @return a copy
   */
  public SandboxSpec withAutoResume(boolean autoResume) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, volumes, network);
  }

  /**
   * Returns a copy with this network, sent in the create request so that the sandbox never runs
   * under another policy, not even for a moment.
   *
   * @param network what the sandbox may reach and how its ports are reached
   * @return a copy with it
   */
  public SandboxSpec withNetwork(SandboxNetwork network) {
    return new SandboxSpec(template, timeout, env, metadata, onTimeout, autoResume, volumes,
        Objects.requireNonNull(network, "network"));
  }
}
