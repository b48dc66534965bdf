package io.sandboxes.e2b;

import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.Secrets;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A volume with its token, and its content as E2B's volume content API serves it: list, make
 * directories, read, write (whole or streamed), inspect, change owner and mode, and remove, with
 * no sandbox running. Obtained from {@link E2BVolumes#create(String)} or
 * {@link E2BVolumes#connect(String)}, as E2B's {@code Volume}. Thread-safe.
 *
 * <p>Content calls go to the volume API URL ({@link #contentUrl()}) with the volume's token as
 * {@code Authorization: Bearer}, never with the API key. Each path is a path inside the volume.
 * A path that is not there is {@link VolumePathNotFoundException}; a refused token
 * {@link VolumeAuthenticationException}; nothing is retried. The local server does not serve the
 * volume content API yet; mount the volume into a sandbox there
 * ({@link io.sandboxes.SandboxSpec#withVolume(String, String)} with {@link #name()}).
 *
 * {@snippet :
 * Volume data = e2b.api().volumes().create("data");
 * data.makeDir("/reports", VolumeWriteOptions.DEFAULTS.withForce(true));
 * data.writeFile("/reports/a.txt", "hello");
 * String text = data.readText("/reports/a.txt");
 * }
 *
 * @since 0.1
 */
public final class Volume {
  private final String volumeId;
  private final String name;
  private final String token;
  private final @Nullable String domain;
  private final VolumeWire wire;

  Volume(String volumeId, String name, String token, @Nullable String domain, Http http, URI contentUrl) {
    this.volumeId = Objects.requireNonNull(volumeId, "volumeId");
    this.name = Objects.requireNonNull(name, "name");
    this.token = Objects.requireNonNull(token, "token");
    this.domain = domain;
    this.wire = new VolumeWire(http, contentUrl, volumeId, token);
    Secrets.hold(this, token);
  }

  /**
   * Returns the volume's id.
   *
   * @return the id the server gave it
   */
  public String volumeId() {
    return volumeId;
  }

  /**
   * Returns the volume's name, the one sandboxes mount it by.
   *
   * @return its name, unique per account
   */
  public String name() {
    return name;
  }

  /**
   * Returns the volume's token, the credential of its content calls.
   *
   * @return the token the control plane gave with the volume
   */
  public String token() {
    return token;
  }

  /**
   * Returns the domain the control plane named for the volume's content, as E2B's
   * {@code volume.domain}: set for an account on its own cluster, null otherwise.
   *
   * @return the domain, or null when the server named none
   */
  public @Nullable String domain() {
    return domain;
  }

  /**
   * Returns where this volume's content calls go.
   *
   * @return the volume API's base URL
   */
  public URI contentUrl() {
    return wire.base();
  }

  /**
   * Returns the volume's id and name.
   *
   * @return what {@link E2BApi#listVolumes()} lists for it
   */
  public VolumeInfo info() {
    return new VolumeInfo(volumeId, name);
  }

  /**
   * Lists a directory one level deep.
   *
   * @param path the directory
   * @return its entries
   * @throws VolumePathNotFoundException when there is no such directory
   */
  public List<VolumeEntry> list(String path) {
    return list(path, 1);
  }

  /**
   * Lists a directory, as E2B's {@code volume.list(path, {depth})}.
   *
   * @param path the directory
   * @param depth how many levels down to list, at least 1
   * @return its entries, and theirs down to {@code depth}
   * @throws VolumePathNotFoundException when there is no such directory
   */
  public List<VolumeEntry> list(String path, int depth) {
    requirePath(path);
    if (depth < 1) {
      throw new IllegalArgumentException("depth must be at least 1, got " + depth);
    }
    String context = "list " + path + " in volume " + name;
    HttpRequest r = wire.request(wire.http(), "dir", path, null, depth).GET().header("Accept", "application/json").build();
    return VolumeWire.entries(wire.call(r, path, context), context);
  }

  /**
   * Makes a directory with the server's defaults.
   *
   * @param path the directory to make
   * @return the new directory
   * @throws VolumePathNotFoundException when its parent is missing
   */
  public VolumeEntry makeDir(String path) {
    return makeDir(path, VolumeWriteOptions.DEFAULTS);
  }

  /**
   * Makes a directory, as E2B's {@code volume.makeDir}.
   *
   * @param path the directory to make
   * @param options owner, mode, and {@code force} to make missing parents too
   * @return the new directory
   * @throws VolumePathNotFoundException when its parent is missing and {@code force} is not set
   */
  public VolumeEntry makeDir(String path, VolumeWriteOptions options) {
    requirePath(path);
    Objects.requireNonNull(options, "options");
    String context = "make directory " + path + " in volume " + name;
    HttpRequest r = wire.request(wire.http(), "dir", path, options, null).POST(HttpRequest.BodyPublishers.noBody())
        .header("Accept", "application/json").build();
    return VolumeWire.entry(wire.call(r, path, context), context);
  }

  /**
   * Describes an entry, as E2B's {@code volume.getInfo(path)}.
   *
   * @param path the file, directory or link
   * @return what it is
   * @throws VolumePathNotFoundException when there is nothing at {@code path}
   */
  public VolumeEntry getInfo(String path) {
    requirePath(path);
    String context = "describe " + path + " in volume " + name;
    HttpRequest r = wire.request(wire.http(), "path", path, null, null).GET().header("Accept", "application/json").build();
    return VolumeWire.entry(wire.call(r, path, context), context);
  }

  /**
   * Says whether there is something at a path, as E2B's {@code volume.exists}: false only when the
   * server answers 404; any other failure is thrown, never taken for absence.
   *
   * @param path the file, directory or link
   * @return true when it is there
   */
  public boolean exists(String path) {
    try {
      getInfo(path);
      return true;
    } catch (VolumePathNotFoundException e) {
      return false;
    }
  }

  /**
   * Changes an entry's owner or mode, as E2B's {@code volume.updateMetadata}: the set fields go
   * in a JSON body ({@code uid}, {@code gid}, {@code mode}); {@code force} must be unset.
   *
   * @param path the file or directory
   * @param metadata the owner and mode to set
   * @return the entry as it is now
   * @throws VolumePathNotFoundException when there is nothing at {@code path}
   * @throws IllegalArgumentException when nothing is set, or {@code force} is
   */
  public VolumeEntry updateMetadata(String path, VolumeWriteOptions metadata) {
    requirePath(path);
    Objects.requireNonNull(metadata, "metadata");
    if (metadata.force() != null) {
      throw new IllegalArgumentException("force has no meaning for updateMetadata");
    }
    if (metadata.uid() == null && metadata.gid() == null && metadata.mode() == null) {
      throw new IllegalArgumentException("updateMetadata needs a uid, gid or mode");
    }
    var body = Json.object();
    if (metadata.uid() != null) {
      body.put("uid", metadata.uid());
    }
    if (metadata.gid() != null) {
      body.put("gid", metadata.gid());
    }
    if (metadata.mode() != null) {
      body.put("mode", metadata.mode());
    }
    String context = "update the metadata of " + path + " in volume " + name;
    HttpRequest r = wire.request(wire.http(), "path", path, null, null)
        .method("PATCH", HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body)))
        .header("Content-Type", "application/json").header("Accept", "application/json").build();
    return VolumeWire.entry(wire.call(r, path, context), context);
  }

  /**
   * Reads a whole file into memory, as E2B's {@code volume.readFile(path, {format: 'bytes'})}.
   * For a large file use {@link #readStream(String)}.
   *
   * @param path the file
   * @return its bytes
   * @throws VolumePathNotFoundException when there is no such file
   */
  public byte[] readFile(String path) {
    requirePath(path);
    HttpRequest r = wire.request(wire.fileHttp(), "file", path, null, null).GET().build();
    return wire.fileCall(r, path, "read " + path + " in volume " + name);
  }

  /**
   * Reads a whole file as UTF-8 text, as E2B's {@code volume.readFile(path)}.
   *
   * @param path the file
   * @return its text
   * @throws VolumePathNotFoundException when there is no such file
   */
  public String readText(String path) {
    return new String(readFile(path), StandardCharsets.UTF_8);
  }

  /**
   * Opens a file for reading as it arrives, as E2B's {@code volume.readFile(path, {format:
   * 'stream'})}: only what the caller has not read yet is buffered. The status is checked before
   * this returns; close the stream to release the connection.
   *
   * @param path the file
   * @return its content, read from the connection
   * @throws VolumePathNotFoundException when there is no such file
   */
  public InputStream readStream(String path) {
    requirePath(path);
    HttpRequest r = wire.request(wire.fileHttp(), "file", path, null, null).GET().build();
    return wire.stream(r, path, "read " + path + " in volume " + name);
  }

  /**
   * Writes a file from bytes in memory, as E2B's {@code volume.writeFile}.
   *
   * @param path the file; missing parents are not made
   * @param data its content
   * @return the written file
   */
  public VolumeEntry writeFile(String path, byte[] data) {
    return writeFile(path, data, VolumeWriteOptions.DEFAULTS);
  }

  /**
   * Writes a file from UTF-8 text.
   *
   * @param path the file
   * @param text its content
   * @return the written file
   */
  public VolumeEntry writeFile(String path, String text) {
    return writeFile(path, text.getBytes(StandardCharsets.UTF_8), VolumeWriteOptions.DEFAULTS);
  }

  /**
   * Writes a file from bytes in memory with owner, mode and overwrite.
   *
   * @param path the file
   * @param data its content
   * @param options owner, mode, and {@code force} to overwrite an existing file
   * @return the written file
   */
  public VolumeEntry writeFile(String path, byte[] data, VolumeWriteOptions options) {
    Objects.requireNonNull(data, "data");
    return upload(path, HttpRequest.BodyPublishers.ofByteArray(data), options);
  }

  /**
   * Writes a file from a stream, sent as it is read (chunked), never held whole in memory, as
   * E2B's {@code volume.writeFile} with a {@code ReadableStream}. The stream is read to its end
   * and not closed here.
   *
   * @param path the file
   * @param data its content
   * @param options owner, mode, and {@code force} to overwrite an existing file
   * @return the written file
   */
  public VolumeEntry writeFile(String path, InputStream data, VolumeWriteOptions options) {
    Objects.requireNonNull(data, "data");
    return upload(path, HttpRequest.BodyPublishers.ofInputStream(() -> data), options);
  }

  private VolumeEntry upload(String path, HttpRequest.BodyPublisher body, VolumeWriteOptions options) {
    requirePath(path);
    Objects.requireNonNull(options, "options");
    String context = "write " + path + " in volume " + name;
    HttpRequest r = wire.request(wire.fileHttp(), "file", path, options, null).PUT(body)
        .header("Content-Type", "application/octet-stream").header("Accept", "application/json").build();
    return VolumeWire.entry(wire.fileCall(r, path, context), context);
  }

  /**
   * Removes a file or directory, as E2B's {@code volume.remove}.
   *
   * @param path what to remove
   * @throws VolumePathNotFoundException when there is nothing at {@code path}
   */
  public void remove(String path) {
    requirePath(path);
    HttpRequest r = wire.request(wire.http(), "path", path, null, null).DELETE().build();
    wire.call(r, path, "remove " + path + " from volume " + name);
  }

  /** The id, name and content URL; never the token. */
  @Override
  public String toString() {
    return "Volume[volumeId=" + volumeId + ", name=" + name + ", contentUrl=" + wire.base() + "]";
  }

  private static void requirePath(String path) {
    if (Objects.requireNonNull(path, "path").isEmpty()) {
      throw new IllegalArgumentException("path must not be empty");
    }
  }

  static void requireUnsigned(@Nullable Integer value, String name) {
    if (value != null && value < 0) {
      throw new IllegalArgumentException(name + " must not be negative, got " + value);
    }
  }
}
