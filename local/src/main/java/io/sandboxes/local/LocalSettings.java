package io.sandboxes.local;

import static io.sandboxes.local.LocalRuntimeService.BACKGROUND_PROPERTY;
import static io.sandboxes.local.LocalRuntimeService.REUSE_PROPERTY;
import static io.sandboxes.local.LocalRuntimeService.RUNTIME_PROPERTY;
import static io.sandboxes.local.LocalRuntimeService.WARM_POOL_MAX_PROPERTY;
import static io.sandboxes.local.LocalRuntimeService.WARM_POOL_PROPERTY;

import io.sandboxes.local.internal.Templates;
import io.sandboxes.spi.LocalRuntime.Options;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What {@code Sandboxes.local()} runs with: what the caller set in code, completed from the system
 * properties ({@code sandboxes.local.*}) and the environment, then the defaults. A value that
 * cannot be read is refused with the property's name, never taken for the default.
 *
 * @param warmPool the warm pool's size per template
 * @param runtime the OCI runtime of the sandboxes, or null for Docker's default
 * @param reuse whether a server already running on this machine is used
 * @param background whether a server started is started in a process of its own
 * @param stateRoot the folder the server keeps its state in
 * @param warmPoolMax the most a warm pool grows to, or null for the server's default
 */
record LocalSettings(Map<String, Integer> warmPool, @Nullable String runtime, boolean reuse, boolean background, Path stateRoot,
    @Nullable Integer warmPoolMax) {

  static LocalSettings of(Options options, Function<String, @Nullable String> properties, Function<String, @Nullable String> environment) {
    Map<String, Integer> pool = new LinkedHashMap<>(parseWarmPool(properties.apply(WARM_POOL_PROPERTY)));
    pool.putAll(options.warmPool());
    String runtime = options.runtime() != null ? options.runtime() : blankToNull(properties.apply(RUNTIME_PROPERTY));
    boolean background = options.background() != null ? options.background() : flag(properties, BACKGROUND_PROPERTY, false);
    // background(true) in code means reuse, whatever the property says: a server in the background is found again by reuse
    boolean reuse = options.reuse() != null ? options.reuse()
        : Boolean.TRUE.equals(options.background()) || flag(properties, REUSE_PROPERTY, true);
    if (background && !reuse) {
      throw new IllegalArgumentException("a server started in the background is found again by reuse: background needs reuse ("
          + REUSE_PROPERTY + " is false, or reuse(false) was set; leave background off, or reuse on)");
    }
    String stateDir = environment.apply("SANDBOXES_STATE_DIR");
    Path root = options.stateRoot() != null ? options.stateRoot()
        : stateDir != null && !stateDir.isBlank() ? Path.of(stateDir) : ServerParts.defaultStateRoot();
    Integer max = options.warmPoolMax() != null ? options.warmPoolMax() : parseWarmPoolMax(properties.apply(WARM_POOL_MAX_PROPERTY));
    return new LocalSettings(Map.copyOf(pool), runtime, reuse, background, root, max);
  }

  /** {@code 0} to {@code 64}, or null when not set. */
  static @Nullable Integer parseWarmPoolMax(@Nullable String value) {
    String v = blankToNull(value);
    if (v == null) {
      return null;
    }
    int max;
    try {
      max = Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(WARM_POOL_MAX_PROPERTY + " is a number of sandboxes, 0 to 64, got '" + value + "'");
    }
    if (max < 0 || max > 64) {
      throw new IllegalArgumentException(WARM_POOL_MAX_PROPERTY + ": a warm pool grows to 0 to 64 sandboxes, got '" + value + "'");
    }
    return max;
  }

  /** {@code 0}, {@code 3}, {@code base=1,my-template=2}: a bare number sizes {@code base}. */
  static Map<String, Integer> parseWarmPool(@Nullable String value) {
    Map<String, Integer> out = new LinkedHashMap<>();
    if (value == null || value.isBlank()) {
      return out;
    }
    for (String entry : value.split(",")) {
      String e = entry.strip();
      int eq = e.lastIndexOf('=');
      String template = eq > 0 ? e.substring(0, eq).strip() : Templates.BASE;
      String n = eq > 0 ? e.substring(eq + 1).strip() : e;
      int size;
      try {
        size = Integer.parseInt(n);
      } catch (NumberFormatException x) {
        throw new IllegalArgumentException(WARM_POOL_PROPERTY + " is N or TEMPLATE=N, comma-separated, got '" + value + "'");
      }
      if (size < 0 || size > 64 || template.isEmpty()) {
        throw new IllegalArgumentException(WARM_POOL_PROPERTY + ": a warm pool holds 0 to 64 sandboxes, got '" + e + "'");
      }
      out.put(template, size);
    }
    return out;
  }

  /** The value stripped, or null for none or a blank one. */
  static @Nullable String blankToNull(@Nullable String v) {
    return v == null || v.isBlank() ? null : v.strip();
  }

  private static boolean flag(Function<String, @Nullable String> properties, String name, boolean fallback) {
    String v = blankToNull(properties.apply(name));
    if (v == null) {
      return fallback;
    }
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(name + " must be true or false, got '" + v + "'");
    };
  }
}
