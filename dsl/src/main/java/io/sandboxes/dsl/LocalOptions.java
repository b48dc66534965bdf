package io.sandboxes.dsl;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.sandboxes.spi.LocalRuntime;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link Sandboxes#local(java.util.function.UnaryOperator)} gets its server: reuse of a
 * {@code sandboxes-local} already running on this machine, or the size of the warm pool, the
 * runtime and the lifetime of one it starts. What is not set here comes from the system
 * properties, then the defaults:
 *
 * <table>
 *   <caption>settings, their system properties and defaults</caption>
 *   <tr><th>setting</th><th>system property</th><th>default</th></tr>
 *   <tr><td>{@link #warmPool(int)}, {@link #warmPool(String, int)}</td>
 *       <td>{@code sandboxes.local.warm-pool}, e.g. {@code 0} or {@code base=1,my-template=2}</td>
 *       <td>2 of {@code base}</td></tr>
 *   <tr><td>{@link #warmPoolMax(int)}</td><td>{@code sandboxes.local.warm-pool-max}</td><td>16 to 64, from the engine's memory</td></tr>
 *   <tr><td>{@link #runtime(String)}</td><td>{@code sandboxes.local.runtime}</td><td>Docker's default (runc)</td></tr>
 *   <tr><td>{@link #reuse(boolean)}</td><td>{@code sandboxes.local.reuse}</td><td>true</td></tr>
 *   <tr><td>{@link #background(boolean)}</td><td>{@code sandboxes.local.background}</td><td>false</td></tr>
 * </table>
 *
 * {@snippet :
 * try (SandboxClient sandboxes = Sandboxes.local(o -> o.warmPool(0))) {   // no pre-started sandboxes
 *   // ...
 * }
 * }
 *
 * <p>A builder: not thread-safe, used once by the call it is given to.
 *
 * @since 0.1
 */
public final class LocalOptions {
  private final Map<String, Integer> warmPool = new LinkedHashMap<>();
  private @Nullable String runtime;
  private @Nullable Boolean reuse;
  private @Nullable Boolean background;
  private @Nullable Path stateRoot;
  private @Nullable Integer warmPoolMax;

  LocalOptions() {}

  /**
   * Sets how many pre-started sandboxes of the {@code base} template a server this starts keeps
   * ready. A create without volume mounts takes one (in milliseconds, against about half a
   * second for a container started cold) and one refill starts in the background. An idle
   * member is a running container holding about 0.6 MiB of memory and no measurable CPU, plus
   * about 6.5 MiB for Docker's shim process on the host; its limits (2 CPUs, 1 GiB) are ceilings,
   * not reservations. A server found running keeps its own pool.
   *
   * @param size 0 to 64; 0 turns the pool off; 2 by default
   * @return this
   * @throws IllegalArgumentException for a size out of range
   */
  @CanIgnoreReturnValue
  public LocalOptions warmPool(int size) {
    return warmPool("base", size);
  }

  /**
   * Sets how many pre-started sandboxes of one template a server this starts keeps ready, as
   * {@link #warmPool(int)} does for {@code base}.
   *
   * @param templateId {@code base}, or a template's id or name as a create names it
   * @param size 0 to 64; 0 turns that template's pool off
   * @return this
   * @throws IllegalArgumentException for a size out of range or a blank template
   */
  @CanIgnoreReturnValue
  public LocalOptions warmPool(String templateId, int size) {
    if (Objects.requireNonNull(templateId, "templateId").isBlank()) {
      throw new IllegalArgumentException("templateId must not be blank");
    }
    if (size < 0 || size > 64) {
      throw new IllegalArgumentException("a warm pool holds 0 to 64 sandboxes, not " + size);
    }
    warmPool.put(templateId, size);
    return this;
  }

  /**
   * Sets how far each template's warm pool of a server this starts may grow with demand. The
   * size set by {@link #warmPool(String, int)} is the floor; with creates coming (those of the
   * last ten seconds) the pool grows toward this, refilling several members at once, and falls
   * back to the floor a minute after the last create. A burst of N creates is warm when this is
   * at least N, and so is a suite's next run of N back-to-back creates (each member about 8 MiB
   * of the machine's memory while idle, the engine's shim for it included). A server found
   * running keeps its own.
   *
   * @param max 0 to 64; 0 keeps every pool at its floor; by default as many as fit in a 64th of
   *     the engine's memory at 8 MiB each, 16 to 64
   * @return this
   * @throws IllegalArgumentException for a maximum out of range
   */
  @CanIgnoreReturnValue
  public LocalOptions warmPoolMax(int max) {
    if (max < 0 || max > 64) {
      throw new IllegalArgumentException("a warm pool grows to 0 to 64 sandboxes, not " + max);
    }
    this.warmPoolMax = max;
    return this;
  }

  /**
   * Chooses the OCI runtime the sandboxes run on, by its name in Docker: {@code runsc} runs them
   * under gVisor (README, "Choosing gVisor"). A server found running is used only when it runs
   * this runtime.
   *
   * @param runtime {@code runsc}, {@code runc}, or another name Docker knows gVisor by
   * @return this
   */
  @CanIgnoreReturnValue
  public LocalOptions runtime(String runtime) {
    if (Objects.requireNonNull(runtime, "runtime").isBlank()) {
      throw new IllegalArgumentException("runtime must not be blank");
    }
    this.runtime = runtime.strip();
    return this;
  }

  /**
   * Says whether a {@code sandboxes-local} server already running on this machine may be used
   * instead of starting one: the one {@code SANDBOXES_LOCAL_URL} names, else the one a running
   * {@code sandboxes-local serve} announced in the state folder (README, "Sandboxes that outlive
   * the JVM"). Such a server is used only when it is this user's, listens on loopback, answers
   * with the key it announced, keeps sandboxes from the network unless their policy says
   * otherwise, and runs the runtime asked for. Its sandboxes, paused ones included, outlive this
   * program; closing the client leaves them, and the server, running.
   *
   * @param reuse false to always start a server in this process; true by default
   * @return this
   */
  @CanIgnoreReturnValue
  public LocalOptions reuse(boolean reuse) {
    this.reuse = reuse;
    return this;
  }

  /**
   * Says whether a server this starts (when none runs to be reused) runs in the background, as
   * a process of its own that outlives this JVM, instead of inside it. It is started from this
   * program's class path ({@code sandboxes-local serve} with ephemeral loopback ports), announces
   * itself in the state folder so that the next {@code Sandboxes.local()} on this machine finds
   * and reuses it, and stops by itself after 30 minutes with no sandbox (running or paused) and
   * no call; {@code sandboxes-local stop} stops it earlier. Closing the client leaves it, and its
   * sandboxes, running. Turning it on here turns {@link #reuse(boolean) reuse} on too, whatever
   * {@code sandboxes.local.reuse} says (with {@code reuse(false)} here the call fails). Needs {@code sandboxes-local} as a jar or folder on the class path (a
   * jar nested in another, as in a Spring Boot executable jar, cannot be started).
   *
   * @param background true to start it in the background; false by default
   * @return this
   */
  @CanIgnoreReturnValue
  public LocalOptions background(boolean background) {
    this.background = background;
    return this;
  }

  /** For tests: the state root servers announce themselves in (otherwise $SANDBOXES_STATE_DIR or the default). */
  @CanIgnoreReturnValue
  LocalOptions stateRoot(Path stateRoot) {
    this.stateRoot = Objects.requireNonNull(stateRoot, "stateRoot");
    return this;
  }

  LocalRuntime.Options toSpi() {
    return new LocalRuntime.Options(warmPool, runtime, reuse, background, stateRoot, warmPoolMax);
  }
}
