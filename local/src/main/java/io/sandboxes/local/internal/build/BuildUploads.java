package io.sandboxes.local.internal.build;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The COPY contexts uploaded for template builds, kept by their files hash in the server's state
 * folder ({@code <hash>.tar}). An upload is used only under the hash of what it holds: a COPY step
 * checks it ({@link CopyArchive}) and one that is not what its hash says is removed. Nothing keeps
 * uploads for long: one that no build step holds and that nobody uploaded or used for
 * {@link #RETENTION} is removed (looked for every {@link #SWEEP_PERIOD}), and a starting server
 * removes every upload and leftover a previous run left (builds do not outlive their server, so
 * nothing refers to them). All uploads together hold at most the store's limit.
 */
final class BuildUploads implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BuildUploads.class);
  /** The most one upload may hold. */
  static final long MAX_UPLOAD = 1L << 30;
  static final Duration LINK_LIFE = Duration.ofMinutes(30);
  /** How long an upload nothing holds is kept after its last upload or use. */
  static final Duration RETENTION = Duration.ofHours(1);
  static final Duration SWEEP_PERIOD = Duration.ofMinutes(5);
  /** The most upload links outstanding at once. */
  static final int MAX_LINKS = 10_000;
  private static final Pattern HASH = Pattern.compile("^[a-f0-9]{64}$");

  private record Link(String templateId, String hash, Instant until) {}

  private final Path dir;
  private final long maxStored;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, Link> links = new ConcurrentHashMap<>();
  /** Upload to when it was last uploaded or used. */
  private final Map<String, Instant> touched = new ConcurrentHashMap<>();
  /** Upload to the {@code src\0dest} of the step whose hash it was found to give. */
  private final Map<String, String> verified = new ConcurrentHashMap<>();
  /** Upload to how many build steps hold it now; guarded by this. */
  private final Map<String, Integer> held = new HashMap<>();
  /** Files being written now (uploads in progress, repacks): never swept. */
  private final Set<Path> writing = ConcurrentHashMap.newKeySet();
  private final Thread sweeper;
  private volatile boolean closed;

  /**
   * @param dir the folder (made when missing); what a previous run left in it is removed
   * @param maxStored the most all uploads together may hold
   */
  BuildUploads(Path dir, long maxStored) {
    this.dir = dir;
    this.maxStored = maxStored;
    removeLeftovers();
    this.sweeper = Thread.ofVirtual().name("template-uploads-sweeper").start(this::sweepLoop);
  }

  /** Checks a files hash's shape. */
  static void checkHash(String hash) throws RpcError {
    if (!HASH.matcher(hash).matches()) {
      throw new RpcError("invalid_argument", "files hash must be 64 lowercase hex digits, got '" + SafeTar.abbreviate(hash) + "'");
    }
  }

  Path file(String hash) {
    return dir.resolve(hash + ".tar");
  }

  /** @return whether files were uploaded under this hash (they count as used now) */
  boolean present(String hash) {
    if (Files.isRegularFile(file(hash), LinkOption.NOFOLLOW_LINKS)) {
      touched.put(hash, Instant.now());
      return true;
    }
    return false;
  }

  /**
   * A token to upload a template's files under {@code hash} with.
   *
   * @throws RpcError resource_exhausted when {@link #MAX_LINKS} are outstanding
   */
  String link(String templateId, String hash) throws RpcError {
    Instant now = Instant.now();
    links.values().removeIf(l -> l.until().isBefore(now));
    if (links.size() >= MAX_LINKS) {
      throw new RpcError("resource_exhausted", "more than " + MAX_LINKS + " upload links are outstanding: use or let some expire"
          + " (each lives " + LINK_LIFE.toMinutes() + " minutes)");
    }
    byte[] raw = new byte[24];
    random.nextBytes(raw);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    links.put(token, new Link(templateId, hash, now.plus(LINK_LIFE)));
    return token;
  }

  /**
   * Stores an upload made with a token from {@link #link}: at most {@link #MAX_UPLOAD} bytes,
   * and all uploads together at most the store's limit (uploads no build holds are removed, oldest
   * first, to make room).
   *
   * @param length the body's declared length, or -1
   * @throws RpcError unauthenticated for an unknown or expired token, invalid_argument for a body
   *     too large, resource_exhausted when the store is full of uploads builds hold
   */
  void upload(String templateId, String hash, @Nullable String token, InputStream body, long length) throws RpcError, IOException {
    Link link = token == null ? null : links.remove(token);
    if (link == null || !link.templateId().equals(templateId) || !link.hash().equals(hash) || link.until().isBefore(Instant.now())) {
      throw new RpcError("unauthenticated", "the upload link is unknown, used or expired");
    }
    if (length > MAX_UPLOAD) {
      throw new RpcError("invalid_argument", "the upload is larger than " + MAX_UPLOAD + " bytes");
    }
    makeRoom(Math.max(length, 0), hash);
    Files.createDirectories(dir);
    Path part = Files.createTempFile(dir, hash, ".part");
    writing.add(part);
    try {
      try (OutputStream out = Files.newOutputStream(part)) {
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        long room = maxStored - stored(part);
        int n;
        while ((n = body.read(buf)) >= 0) {
          total += n;
          if (total > MAX_UPLOAD) {
            throw new RpcError("invalid_argument", "the upload is larger than " + MAX_UPLOAD + " bytes");
          }
          if (total > room) {
            throw full();
          }
          out.write(buf, 0, n);
        }
      }
      synchronized (this) {
        // a new upload under a hash is checked anew
        verified.remove(hash);
        Files.move(part, file(hash), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        touched.put(hash, Instant.now());
      }
    } finally {
      writing.remove(part);
      Files.deleteIfExists(part);
    }
  }

  private RpcError full() {
    return new RpcError("resource_exhausted", "the server's store of uploaded build files is full (" + (maxStored >> 20)
        + " MiB, all held by builds in progress): retry once they finish");
  }

  /** Removes uploads no build holds, least recently used first, until {@code bytes} more fit. */
  private synchronized void makeRoom(long bytes, String keep) throws RpcError {
    long stored = stored(null);
    if (stored + bytes <= maxStored) {
      return;
    }
    List<String> candidates = new ArrayList<>();
    for (String h : hashes()) {
      if (!h.equals(keep) && held.getOrDefault(h, 0) == 0) {
        candidates.add(h);
      }
    }
    candidates.sort(Comparator.comparing(h -> touched.getOrDefault(h, Instant.EPOCH)));
    for (String h : candidates) {
      if (stored + bytes <= maxStored) {
        break;
      }
      long size = size(file(h));
      remove(h, "making room for a new upload");
      stored -= size;
    }
    if (stored + bytes > maxStored) {
      throw full();
    }
  }

  /** Holds an upload a started build will use (present or not yet), so it is not swept meanwhile; {@link #release} ends it. */
  synchronized void hold(String hash) {
    held.merge(hash, 1, Integer::sum);
  }

  /** Holds an upload for a build step, so it is not swept meanwhile. */
  synchronized Path acquire(String hash) throws NoSuchFileException {
    Path f = file(hash);
    if (!Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
      throw new NoSuchFileException(f.toString());
    }
    held.merge(hash, 1, Integer::sum);
    touched.put(hash, Instant.now());
    return f;
  }

  synchronized void release(String hash) {
    held.computeIfPresent(hash, (k, v) -> v <= 1 ? null : v - 1);
    touched.put(hash, Instant.now());
  }

  /** @return whether the upload was found to give its hash for this source and destination */
  boolean verified(String hash, String src, String dest) {
    return (src + "\0" + dest).equals(verified.get(hash));
  }

  void markVerified(String hash, String src, String dest) {
    verified.put(hash, src + "\0" + dest);
  }

  /** Removes an upload that is not what its hash says (or is otherwise refused). */
  synchronized void refuse(String hash, String why) {
    remove(hash, why);
  }

  /** A temporary file in the store's folder (a step's repacked files), never swept while its writer holds it. */
  Path temp(String prefix) throws IOException {
    Files.createDirectories(dir);
    Path p = Files.createTempFile(dir, prefix, ".tmp");
    writing.add(p);
    return p;
  }

  void deleteTemp(Path p) throws IOException {
    try {
      Files.deleteIfExists(p);
    } finally {
      writing.remove(p);
    }
  }

  /**
   * Removes uploads nothing holds and nobody uploaded or used since {@code now} less
   * {@link #RETENTION}, and stray files of that age.
   *
   * @return how many were removed
   */
  synchronized int sweep(Instant now) {
    int removed = 0;
    Instant before = now.minus(RETENTION);
    for (String h : hashes()) {
      if (held.getOrDefault(h, 0) == 0 && touched.getOrDefault(h, Instant.EPOCH).isBefore(before)) {
        remove(h, "no build used it for " + RETENTION.toMinutes() + " minutes");
        removed++;
      }
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      for (Path p : s) {
        if (!p.getFileName().toString().endsWith(".tar") && !writing.contains(p)
            && Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).toInstant().isBefore(before)) {
          Files.deleteIfExists(p);
          removed++;
        }
      }
    } catch (NoSuchFileException e) {
      // nothing uploaded yet
    } catch (IOException e) {
      LOG.warn("could not look for stray files among the template uploads in {}: {}", dir, e.toString());
    }
    return removed;
  }

  private void sweepLoop() {
    while (!closed) {
      try {
        Thread.sleep(SWEEP_PERIOD);
      } catch (InterruptedException e) {
        return;
      }
      sweep(Instant.now());
    }
  }

  private void remove(String hash, String why) {
    try {
      Files.deleteIfExists(file(hash));
      StructuredLog.atInfo(LOG).addKeyValue("event", "template.upload-removed").addKeyValue("hash", hash).log("template upload removed: " + why);
    } catch (IOException e) {
      LOG.warn("the template upload {} could not be removed: {}", hash, e.toString());
    }
    touched.remove(hash);
    verified.remove(hash);
  }

  /** The hashes uploaded (the store's {@code <hash>.tar} files). */
  private Set<String> hashes() {
    Set<String> out = new HashSet<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "*.tar")) {
      for (Path p : s) {
        String n = p.getFileName().toString();
        String h = n.substring(0, n.length() - ".tar".length());
        if (HASH.matcher(h).matches() && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
          out.add(h);
        }
      }
    } catch (NoSuchFileException e) {
      // nothing uploaded yet
    } catch (IOException e) {
      LOG.warn("could not list the template uploads in {}: {}", dir, e.toString());
    }
    return out;
  }

  /** Bytes the store holds, uploads and files in progress, but for {@code except}. */
  private long stored(@Nullable Path except) {
    long total = 0;
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      for (Path p : s) {
        if (!p.equals(except)) {
          total += size(p);
        }
      }
    } catch (NoSuchFileException e) {
      return 0;
    } catch (IOException e) {
      LOG.warn("could not measure the template uploads in {}: {}", dir, e.toString());
    }
    return total;
  }

  private static long size(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return 0;
    }
  }

  /** A previous run's uploads, parts and repacks: no build refers to them (builds end with their server). */
  private void removeLeftovers() {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    int removed = 0;
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      for (Path p : s) {
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          Files.deleteIfExists(p);
          removed++;
        }
      }
    } catch (IOException e) {
      LOG.warn("could not remove the template uploads a previous run left in {}: {}", dir, e.toString());
    }
    if (removed > 0) {
      StructuredLog.atInfo(LOG).addKeyValue("event", "template.uploads-removed").addKeyValue("count", removed)
          .log("removed the template uploads a previous run left");
    }
  }

  @Override
  public void close() {
    closed = true;
    sweeper.interrupt();
  }
}
