package io.sandboxes.e2b;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.jspecify.annotations.Nullable;

/**
 * The files of a template's COPY step: found under the context directory without following a
 * symbolic link out of it, hashed as E2B's SDK hashes them (so an unchanged folder is found on the
 * server again), and packed as the gzipped tar E2B's upload takes, entries named by their path
 * relative to the context.
 */
final class TemplateFiles {
  private TemplateFiles() {}

  /** One file, folder or symbolic link, read with {@code lstat}. */
  record Entry(Path path, String relative, int mode, long size, long modifiedMillis, Kind kind, @Nullable String linkTarget) {}

  enum Kind {
    FILE,
    DIRECTORY,
    LINK
  }

  /**
   * Finds what a COPY of {@code src} takes.
   *
   * @param context the context directory
   * @param src a normalized relative path inside it ({@code .} for all of it)
   * @return its entries, a folder first and then everything under it, sorted by path
   * @throws IllegalArgumentException when the context is no folder, the source is missing, or it
   *     is reached through a symbolic link that leaves the context
   */
  static List<Entry> collect(Path context, String src) {
    return collect(context, src, List.of());
  }

  /**
   * Finds what a COPY of {@code src} takes, leaving out what an ignore pattern matches (see
   * {@link CopyGlob}): a path, or a glob pattern whose matches are found without following a
   * symbolic link.
   *
   * @param ignore the build's ignore patterns
   * @return its entries, sorted by path; a matched folder brings everything under it
   * @throws IllegalArgumentException as {@link #collect(Path, String)}, and when nothing is left
   */
  static List<Entry> collect(Path context, String src, List<CopyGlob> ignore) {
    Path root;
    try {
      root = context.toRealPath();
    } catch (IOException e) {
      throw new IllegalArgumentException("the template's context directory " + context + " cannot be read: " + e, e);
    }
    if (!Files.isDirectory(root)) {
      throw new IllegalArgumentException("the template's context directory " + context + " is not a folder");
    }
    boolean glob = CopyGlob.isGlob(src);
    // a glob is matched under the folder its literal start names
    String literal = glob ? literalStart(src) : src;
    Path target = inside(root, literal, src);
    TreeMap<String, Entry> found = new TreeMap<>();
    try {
      if (glob) {
        CopyGlob pattern = CopyGlob.of(src);
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
          try (Stream<Path> walk = Files.walk(target)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
              String rel = name(literal, target, p);
              if (!rel.isEmpty() && pattern.matches(rel) && !CopyGlob.ignored(ignore, rel)) {
                add(found, p, rel, src, ignore);
              }
            }
          }
        }
      } else if (literal.equals(".") || !CopyGlob.ignored(ignore, literal)) {
        add(found, target, literal.equals(".") ? "" : literal, src, ignore);
      }
    } catch (UncheckedIOException e) {
      throw new IllegalArgumentException("copy source '" + src + "' cannot be read: " + e.getCause(), e.getCause());
    } catch (IOException e) {
      throw new IllegalArgumentException("copy source '" + src + "' cannot be read: " + e, e);
    }
    List<Entry> out = new ArrayList<>(found.values());
    if (out.isEmpty() || (out.size() == 1 && out.get(0).relative().isEmpty())) {
      throw new IllegalArgumentException("copy source '" + src + "' holds no files" + (glob ? " (the pattern matches nothing)" : "")
          + (ignore.isEmpty() ? "" : " after the ignore patterns"));
    }
    return out;
  }

  /** An entry and, for a folder, everything under it that no ignore pattern drops; links are never followed. */
  private static void add(TreeMap<String, Entry> found, Path p, String rel, String src, List<CopyGlob> ignore) throws IOException {
    found.put(rel, entry(p, rel, src));
    if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path q : (Iterable<Path>) walk::iterator) {
          String under = p.relativize(q).toString().replace('\\', '/');
          String qrel = rel.isEmpty() ? under : under.isEmpty() ? rel : rel + "/" + under;
          if (!under.isEmpty() && !CopyGlob.ignored(ignore, qrel)) {
            found.put(qrel, entry(q, qrel, src));
          }
        }
      }
    }
  }

  /** The segments of a glob before its first pattern segment, or {@code .}. */
  private static String literalStart(String glob) {
    List<String> lit = new ArrayList<>();
    for (String seg : glob.split("/")) {
      if (CopyGlob.isGlob(seg)) {
        break;
      }
      if (!seg.isEmpty() && !seg.equals(".")) {
        lit.add(seg);
      }
    }
    return lit.isEmpty() ? "." : String.join("/", lit);
  }

  /** The path of {@code rel} in the context, the folders on the way to it followed only while they stay inside it. */
  private static Path inside(Path root, String rel, String src) {
    Path target = root.resolve(rel).normalize();
    if (!target.startsWith(root)) {
      throw new IllegalArgumentException("copy source '" + src + "' leaves the context directory " + root);
    }
    // the folders on the way to the source are followed: each must still be inside the context
    Path parent = target.equals(root) ? root : target.getParent();
    try {
      Path realParent = parent.toRealPath();
      if (!realParent.startsWith(root)) {
        throw new IllegalArgumentException("copy source '" + src + "' leaves the context directory " + root
            + " through a symbolic link (it is in " + realParent + ")");
      }
      target = realParent.resolve(target.getFileName() == null || target.equals(root) ? "" : target.getFileName().toString());
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("copy source '" + src + "' not found in the context directory " + root);
    } catch (IOException e) {
      throw new IllegalArgumentException("copy source '" + src + "' cannot be read: " + e, e);
    }
    if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
      throw new IllegalArgumentException("copy source '" + src + "' not found in the context directory " + root);
    }
    return target;
  }

  /** An entry's name in the archive: the source as it was written, then the path under it. */
  private static String name(String src, Path target, Path p) {
    String under = target.relativize(p).toString().replace('\\', '/');
    if (src.equals(".")) {
      return under;
    }
    return under.isEmpty() ? src : src + "/" + under;
  }

  private static Entry entry(Path p, String rel, String src) throws IOException {
    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    Kind kind;
    if (a.isSymbolicLink()) {
      kind = Kind.LINK;
    } else if (a.isDirectory()) {
      kind = Kind.DIRECTORY;
    } else if (a.isRegularFile()) {
      kind = Kind.FILE;
    } else {
      throw new IllegalArgumentException("copy source '" + src + "' holds " + rel + ", which is neither a file, a folder nor a"
          + " symbolic link");
    }
    return new Entry(p, rel, mode(p, kind), a.size(), a.lastModifiedTime().toMillis(), kind,
        kind == Kind.LINK ? Files.readSymbolicLink(p).toString() : null);
  }

  /** {@code st_mode}, type bits included, as Node's {@code lstat} reports it. */
  private static int mode(Path p, Kind kind) throws IOException {
    try {
      Object m = Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
      if (m instanceof Integer i) {
        return i;
      }
    } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
      // no unix view on this platform: made up from the POSIX permissions below
    }
    int type = switch (kind) {
      case FILE -> 0100000;
      case DIRECTORY -> 040000;
      case LINK -> 0120000;
    };
    int perms = kind == Kind.LINK ? 0777 : kind == Kind.DIRECTORY ? 0755 : 0644;
    try {
      Set<PosixFilePermission> set = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
      perms = 0;
      for (PosixFilePermission perm : set) {
        perms |= 1 << (8 - perm.ordinal());
      }
    } catch (UnsupportedOperationException noPosix) {
      // the defaults above
    }
    return type | perms;
  }

  /**
   * The files hash E2B's SDK computes: SHA-256 over {@code COPY <src> <dest>}, then for each
   * entry its relative path, mode and size (decimal), and a file's content or a link's target.
   */
  static String hash(String src, String dest, List<Entry> entries) {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    sha.update(("COPY " + src + " " + dest).getBytes(StandardCharsets.UTF_8));
    byte[] buf = new byte[64 * 1024];
    for (Entry e : entries) {
      sha.update(e.relative().getBytes(StandardCharsets.UTF_8));
      sha.update(Integer.toString(e.mode()).getBytes(StandardCharsets.UTF_8));
      sha.update(Long.toString(e.size()).getBytes(StandardCharsets.UTF_8));
      if (e.kind() == Kind.LINK) {
        sha.update(java.util.Objects.requireNonNull(e.linkTarget()).getBytes(StandardCharsets.UTF_8));
      } else if (e.kind() == Kind.FILE) {
        try (InputStream in = Files.newInputStream(e.path(), LinkOption.NOFOLLOW_LINKS)) {
          int n;
          while ((n = in.read(buf)) >= 0) {
            sha.update(buf, 0, n);
          }
        } catch (IOException x) {
          throw new IllegalArgumentException("copy source file " + e.relative() + " cannot be read: " + x, x);
        }
      }
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  /**
   * The PAX record in which a folder's entry declares its {@code st_size}, which the files hash
   * includes but no tar header carries: a server can then check the upload against its hash
   * exactly (the local server does; others ignore the record).
   */
  static final String DECLARED_SIZE = "SANDBOXES.size";

  /**
   * Packs the entries as a gzipped tar in a temporary file (an upload needs its exact length):
   * owner 0, permission bits kept, links as links, each folder's size declared
   * ({@link #DECLARED_SIZE}).
   *
   * @return the file; the caller deletes it
   */
  static Path pack(List<Entry> entries) throws IOException {
    Path tar = Files.createTempFile("sandboxes-template-", ".tar.gz");
    try (OutputStream file = Files.newOutputStream(tar);
        TarArchiveOutputStream out = new TarArchiveOutputStream(new GZIPOutputStream(file, 64 * 1024))) {
      out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
      out.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
      for (Entry e : entries) {
        TarArchiveEntry t;
        switch (e.kind()) {
          case DIRECTORY -> {
            // the context itself is "./", as E2B's SDK names it; a folder's size is in the hash, and no tar header carries it
            t = new TarArchiveEntry(e.relative().isEmpty() ? "./" : e.relative() + "/");
            t.addPaxHeader(DECLARED_SIZE, Long.toString(e.size()));
          }
          case LINK -> {
            t = new TarArchiveEntry(e.relative(), TarArchiveEntry.LF_SYMLINK);
            t.setLinkName(java.util.Objects.requireNonNull(e.linkTarget()));
          }
          default -> {
            t = new TarArchiveEntry(e.relative());
            t.setSize(e.size());
          }
        }
        t.setMode(e.mode() & 07777);
        t.setModTime(e.modifiedMillis());
        t.setIds(0, 0);
        out.putArchiveEntry(t);
        if (e.kind() == Kind.FILE) {
          try (InputStream in = Files.newInputStream(e.path(), LinkOption.NOFOLLOW_LINKS)) {
            long copied = copyAtMost(in, out, e.size());
            if (copied != e.size()) {
              throw new IOException("copy source file " + e.relative() + " changed while it was packed");
            }
          }
        }
        out.closeArchiveEntry();
      }
      out.finish();
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tar);
      throw e;
    }
    return tar;
  }

  private static long copyAtMost(InputStream in, OutputStream out, long limit) throws IOException {
    byte[] buf = new byte[64 * 1024];
    long total = 0;
    while (total < limit) {
      int n = in.read(buf, 0, (int) Math.min(buf.length, limit - total));
      if (n < 0) {
        break;
      }
      out.write(buf, 0, n);
      total += n;
    }
    return total;
  }
}
