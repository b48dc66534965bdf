package io.sandboxes.e2b;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One file of a write of several files ({@link Filesystem#write(java.util.List)}), as E2B's
 * {@code WriteEntry}: where it goes and what it holds, as bytes or as a stream read once, while
 * the request is sent.
 *
 * @since 0.1
 */
public final class WriteEntry {
  private final String path;
  private final byte @Nullable [] bytes;
  private final @Nullable InputStream stream;

  private WriteEntry(String path, byte @Nullable [] bytes, @Nullable InputStream stream) {
    this.path = Objects.requireNonNull(path, "path");
    this.bytes = bytes;
    this.stream = stream;
  }

  /**
   * A file with this text, written as UTF-8.
   *
   * @param path where it goes: absolute, or relative to the user's home
   * @param text its content
   * @return the entry
   */
  public static WriteEntry of(String path, String text) {
    return new WriteEntry(path, Objects.requireNonNull(text, "text").getBytes(StandardCharsets.UTF_8), null);
  }

  /**
   * A file with these bytes (not copied: do not change them before the write returns).
   *
   * @param path where it goes: absolute, or relative to the user's home
   * @param bytes its content
   * @return the entry
   */
  public static WriteEntry of(String path, byte[] bytes) {
    return new WriteEntry(path, Objects.requireNonNull(bytes, "bytes"), null);
  }

  /**
   * A file whose content is read from {@code source} while the request is sent, never held whole
   * in memory. The write closes the stream when it is done with it, whatever the outcome.
   *
   * @param path where it goes: absolute, or relative to the user's home
   * @param source its content, read once to its end
   * @return the entry
   */
  public static WriteEntry of(String path, InputStream source) {
    return new WriteEntry(path, null, Objects.requireNonNull(source, "source"));
  }

  /**
   * Returns where the file goes.
   *
   * @return the path, as given
   */
  public String path() {
    return path;
  }

  byte @Nullable [] bytes() {
    return bytes;
  }

  @Nullable InputStream stream() {
    return stream;
  }

  @Override
  public String toString() {
    return "WriteEntry[" + path + (bytes != null ? ", " + bytes.length + " bytes]" : ", a stream]");
  }
}
