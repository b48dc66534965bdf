package io.sandboxes.e2b;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Options of one {@link Filesystem} call, as E2B's {@code FilesystemRequestOpts}, {@code
 * FilesystemReadOpts} and {@code FilesystemWriteOpts} together; immutable, each {@code with…}
 * returns a copy. A call reads the options that concern it: the user and the request timeout
 * concern all, {@code gzip} reads and writes, the stream idle timeout streamed reads, metadata
 * writes.
 *
 * @since 0.1
 */
public final class FileOptions {
  private static final FileOptions DEFAULTS = new FileOptions(null, null, false, Map.of(), null);
  /** E2B's rule for a metadata key: it travels as part of an HTTP header's name, so an HTTP token. */
  private static final Pattern METADATA_KEY = Pattern.compile("[A-Za-z0-9!#$%&'*+\\-.^_`|~]+");
  /** E2B's rule for a metadata value: printable US-ASCII. */
  private static final Pattern METADATA_VALUE = Pattern.compile("[\\x20-\\x7e]*");

  private final @Nullable String user;
  private final @Nullable Duration requestTimeout;
  private final boolean gzip;
  private final Map<String, String> metadata;
  private final @Nullable Duration streamIdleTimeout;

  private FileOptions(@Nullable String user, @Nullable Duration requestTimeout, boolean gzip, Map<String, String> metadata,
      @Nullable Duration streamIdleTimeout) {
    this.user = user;
    this.requestTimeout = requestTimeout;
    this.gzip = gzip;
    this.metadata = metadata;
    this.streamIdleTimeout = streamIdleTimeout;
  }

  /**
   * The defaults: the sandbox's default user, the provider's request timeout, no compression, no
   * metadata.
   *
   * @return the default options
   */
  public static FileOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Runs the call as this user of the sandbox: relative paths resolve against that user's home,
   * the sandbox's permissions apply to that user, and what is created is that user's.
   *
   * @param user a user of the sandbox, e.g. {@code "root"} or {@code "user"}
   * @return a copy with the user set
   */
  public FileOptions withUser(String user) {
    Objects.requireNonNull(user, "user");
    if (user.isEmpty()) {
      throw new IllegalArgumentException("user must not be empty; leave it unset for the sandbox's default user");
    }
    return new FileOptions(user, requestTimeout, gzip, metadata, streamIdleTimeout);
  }

  /**
   * How long the call may wait for the daemon's answer (for a streamed read or write, until the
   * answer starts: the transfer itself is bounded by the stream idle timeout, or by the source).
   *
   * @param timeout positive
   * @return a copy with the timeout set
   */
  public FileOptions withRequestTimeout(Duration timeout) {
    return new FileOptions(user, positive(timeout, "requestTimeout"), gzip, metadata, streamIdleTimeout);
  }

  /**
   * Compresses the transfer with gzip, as E2B's {@code gzip} option: a read asks for a gzip
   * answer (and takes an uncompressed one as it is); a write sends its body gzip-compressed
   * ({@code Content-Encoding: gzip}), one request per file.
   *
   * @param gzip whether to compress
   * @return a copy with compression set
   */
  public FileOptions withGzip(boolean gzip) {
    return new FileOptions(user, requestTimeout, gzip, metadata, streamIdleTimeout);
  }

  /**
   * Metadata stored on each written file, as E2B's {@code metadata} write option (extended
   * attributes {@code user.e2b.<key>} in the sandbox); it replaces what the file had. The sandbox
   * lowercases keys.
   *
   * @param metadata keys of HTTP token characters, values of printable US-ASCII
   * @return a copy with the metadata set
   * @throws IllegalArgumentException naming the first key or value that cannot be sent
   */
  public FileOptions withMetadata(Map<String, String> metadata) {
    Objects.requireNonNull(metadata, "metadata");
    Map<String, String> copy = new LinkedHashMap<>();
    metadata.forEach((k, v) -> {
      if (k == null || !METADATA_KEY.matcher(k).matches()) {
        throw new IllegalArgumentException("invalid metadata key " + (k == null ? "null" : "'" + k + "'")
            + ": keys must be non-empty and use only HTTP token characters (letters, digits and !#$%&'*+-.^_`|~)");
      }
      if (v == null || !METADATA_VALUE.matcher(v).matches()) {
        throw new IllegalArgumentException("invalid metadata value for key '" + k + "': values must be printable US-ASCII");
      }
      copy.put(k, v);
    });
    return new FileOptions(user, requestTimeout, gzip, java.util.Collections.unmodifiableMap(copy), streamIdleTimeout);
  }

  /**
   * How long a streamed read ({@link Filesystem#readStream}) may wait for the next bytes while
   * the caller is reading; past it the stream is closed and the read fails. A caller that pauses
   * between reads is not timed. By default the request timeout.
   *
   * @param timeout positive, or {@link Duration#ZERO} for no limit
   * @return a copy with the idle timeout set
   */
  public FileOptions withStreamIdleTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("streamIdleTimeout must not be negative, got " + timeout);
    }
    return new FileOptions(user, requestTimeout, gzip, metadata, timeout);
  }

  /**
   * Returns the user, or null for the sandbox's default.
   *
   * @return the user, or null for the sandbox's default
   */
  public @Nullable String user() {
    return user;
  }

  /**
   * Returns the request timeout, or null for the provider's.
   *
   * @return the request timeout, or null for the provider's
   */
  public @Nullable Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * Returns whether transfers are gzip-compressed.
   *
   * @return whether transfers are gzip-compressed
   */
  public boolean gzip() {
    return gzip;
  }

  /**
   * Returns the metadata to store on written files, empty for none.
   *
   * @return the metadata to store on written files, empty for none
   */
  public Map<String, String> metadata() {
    return metadata;
  }

  /**
   * Returns the idle timeout of a streamed read, or null for the request timeout.
   *
   * @return the idle timeout of a streamed read, or null for the request timeout
   */
  public @Nullable Duration streamIdleTimeout() {
    return streamIdleTimeout;
  }

  static Duration positive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
    return d;
  }
}
