package io.sandboxes.local.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;

/**
 * The file through which a running {@code sandboxes-local serve} tells other programs of the
 * same user on this machine where it is: {@code server.json} in the state root, holding its API
 * URL, envd URL, API key and process id, readable and writable by its owner only (0600, in a
 * folder that is its owner's).
 *
 * <p>A reader trusts it only when it is a regular file (not a link) owned by the user reading
 * it, with no permission for anyone else, naming loopback {@code http} URLs and a process that
 * is alive and runs as that user. A file that fails any of these is ignored, saying why; a file
 * whose process is gone is stale, and a server that starts removes it before announcing itself.
 */
public final class Announcement {
  /** The file's name in the state root. */
  public static final String FILE = "server.json";

  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

  /** What a valid file says. */
  public record Server(URI apiUrl, URI sandboxUrl, String apiKey, long pid, String serverId, Path file) {
    @Override
    public String toString() {
      // never the key
      return "Server[apiUrl=" + apiUrl + ", sandboxUrl=" + sandboxUrl + ", pid=" + pid + ", serverId=" + serverId + ", file=" + file + "]";
    }
  }

  /** The file's contents, or why they are not to be trusted. */
  public record Read(Optional<Server> server, Optional<String> ignored) {
    static Read none() {
      return new Read(Optional.empty(), Optional.empty());
    }

    static Read ignored(String why) {
      return new Read(Optional.empty(), Optional.of(why));
    }
  }

  private Announcement() {}

  /** @return where servers announce themselves under {@code stateRoot} */
  public static Path file(Path stateRoot) {
    return stateRoot.resolve(FILE);
  }

  /**
   * Announces a server: writes the file (mode 0600, through a temporary file moved into place),
   * creating the state root (mode 0700) if it is missing.
   *
   * @throws IOException when it cannot be written
   */
  public static void write(Path stateRoot, URI apiUrl, URI sandboxUrl, String apiKey, String serverId) throws IOException {
    if (!Files.isDirectory(stateRoot)) {
      Files.createDirectories(stateRoot);
      setPermissions(stateRoot, PosixFilePermissions.fromString("rwx------"));
    }
    String json = Json.object().put("apiUrl", apiUrl.toString()).put("sandboxUrl", sandboxUrl.toString()).put("apiKey", apiKey)
        .put("pid", ProcessHandle.current().pid()).put("serverId", serverId).put("startedAt", java.time.Instant.now().toString())
        .toString();
    Path tmp = Files.createTempFile(stateRoot, ".server-", ".json");
    try {
      setPermissions(tmp, OWNER_ONLY); // before the key is in it
      Files.writeString(tmp, json + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file(stateRoot), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static void setPermissions(Path p, Set<PosixFilePermission> perms) throws IOException {
    if (Files.getFileAttributeView(p, PosixFileAttributeView.class) != null) {
      Files.setPosixFilePermissions(p, perms);
    }
  }

  /**
   * Removes the file if it still announces this process at {@code apiUrl}: a later server's
   * announcement is left alone.
   */
  public static void withdraw(Path stateRoot, URI apiUrl) {
    Path f = file(stateRoot);
    try {
      Read r = read(stateRoot);
      if (r.server().isPresent() && r.server().get().pid() == ProcessHandle.current().pid()
          && r.server().get().apiUrl().equals(apiUrl)) {
        Files.deleteIfExists(f);
      }
    } catch (IOException | RuntimeException e) {
      // the next reader finds its process gone and ignores it
    }
  }

  /**
   * Reads the file, checking everything that can be checked without speaking to the server.
   *
   * @return the server it names, or nothing when there is no file, or nothing with the reason it
   *     was not trusted
   */
  public static Read read(Path stateRoot) {
    Path f = file(stateRoot);
    if (!Files.exists(f, LinkOption.NOFOLLOW_LINKS)) {
      return Read.none();
    }
    try {
      if (!Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
        return Read.ignored(f + " is not a regular file");
      }
      PosixFileAttributeView view = Files.getFileAttributeView(f, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
      if (view != null) {
        PosixFileAttributes a = view.readAttributes();
        String me = System.getProperty("user.name");
        if (!a.owner().getName().equals(me)) {
          return Read.ignored(f + " belongs to " + a.owner().getName() + ", not to " + me);
        }
        if (!OWNER_ONLY.containsAll(a.permissions())) {
          return Read.ignored(f + " may be read or written by others than its owner (" + PosixFilePermissions.toString(a.permissions())
              + "; a server writes it rw-------)");
        }
      }
      JsonNode n = Json.parse(Files.readAllBytes(f));
      URI api = loopback(Json.requireText(n, "apiUrl"));
      URI envd = loopback(Json.requireText(n, "sandboxUrl"));
      String key = Json.requireText(n, "apiKey");
      long pid = n.path("pid").asLong(-1);
      Optional<ProcessHandle> process = ProcessHandle.of(pid);
      if (process.isEmpty() || !process.get().isAlive()) {
        return Read.ignored(f + " is stale: its server (pid " + pid + ") is gone");
      }
      Optional<String> user = process.get().info().user();
      if (user.isPresent() && !user.get().equals(System.getProperty("user.name"))) {
        return Read.ignored(f + " names pid " + pid + ", which runs as " + user.get() + ", not as " + System.getProperty("user.name"));
      }
      return new Read(Optional.of(new Server(api, envd, key, pid, n.path("serverId").asText("?"), f)), Optional.empty());
    } catch (IOException | RuntimeException e) {
      return Read.ignored(f + " could not be read: " + e.getMessage());
    }
  }

  /**
   * @return the URL, when it is {@code http} on a loopback address
   * @throws IllegalArgumentException otherwise
   */
  public static URI loopback(String url) {
    URI u = URI.create(url);
    String host = u.getHost();
    if (!"http".equals(u.getScheme()) || host == null || !isLoopback(host)) {
      throw new IllegalArgumentException(url + " is not an http URL on this machine's loopback");
    }
    return u;
  }

  /** @return whether the host is a loopback address (by its literal, or {@code localhost}) */
  public static boolean isLoopback(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return h.equals("localhost") || h.matches("127(\\.\\d{1,3}){3}") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1");
  }
}
