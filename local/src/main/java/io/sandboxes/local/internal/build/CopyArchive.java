package io.sandboxes.local.internal.build;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.jspecify.annotations.Nullable;

/**
 * One COPY step's files, taken from the archive uploaded for it: read as hostile input
 * ({@link SafeTar}), counted against the build's {@link BuildBudget}, checked against the files
 * hash the step names ({@link FilesHash}), and re-packed under the step's destination for its
 * container. CPU-heavy (decompression, hashing, tar): run on the builds' CPU threads, never on a
 * thread that serves requests.
 */
final class CopyArchive {
  private static final Pattern GLOB = Pattern.compile("[*?\\[{]");
  /** The file systems assumed for folder sizes on the first reading: those that need no look at the folders' entries. */
  private static final List<FilesHash.Sizes> FIRST = List.of(FilesHash.Sizes.BLOCKS, FilesHash.Sizes.ZERO);
  /** And on the second, after a look at them. */
  private static final List<FilesHash.Sizes> SECOND = List.of(FilesHash.Sizes.BLOCKS, FilesHash.Sizes.TMPFS, FilesHash.Sizes.BTRFS,
      FilesHash.Sizes.XFS, FilesHash.Sizes.XFS64, FilesHash.Sizes.APFS, FilesHash.Sizes.ZFS);

  private CopyArchive() {}

  /**
   * What a step copies.
   *
   * @param name the step's name, for messages
   * @param src its source as the step names it (the hash is made over it)
   * @param dest its destination as the step names it (likewise)
   * @param rel the source as a plain path inside the context ({@link #normalizeSource})
   * @param destPath the absolute destination
   * @param hash the files hash the step names
   */
  record Step(String name, String src, String dest, String rel, String destPath, String hash) {}

  /** The archive is not what its hash says; the upload is to be removed. */
  static final class Mismatch extends IOException {
    private static final long serialVersionUID = 1L;

    Mismatch(String message) {
      super(message);
    }
  }

  /**
   * A COPY source as a plain relative path inside the context, or the step fails. A glob (the SDK
   * matched it and uploaded the matches only) stands, as on E2B, for its folder before the first
   * segment with a pattern: that folder's uploaded contents are merged into the destination.
   */
  static String normalizeSource(String name, String src) throws StepFailed {
    if (src.isEmpty() || src.startsWith("/") || src.contains("\\") || src.contains("\0")) {
      throw new StepFailed(name, "COPY source '" + SafeTar.abbreviate(src)
          + "' is outside the build context: it must be a relative path inside it");
    }
    if (SafeTar.utf8Length(src) > SafeTar.MAX_NAME) {
      throw new StepFailed(name, "COPY source '" + SafeTar.abbreviate(src) + "' is longer than " + SafeTar.MAX_NAME
          + " bytes");
    }
    List<String> parts = new ArrayList<>();
    boolean pattern = false;
    for (String p : src.split("/")) {
      if (p.equals("..")) {
        throw new StepFailed(name, "COPY source '" + src + "' is outside the build context: '..' is refused");
      }
      pattern |= GLOB.matcher(p).find();
      if (!pattern && !p.isEmpty() && !p.equals(".")) {
        parts.add(p);
      }
    }
    return String.join("/", parts);
  }

  /** {@code s} without the slashes it ends with (in linear time: a regex backtracks on a long run of them). */
  static String stripTrailingSlashes(String s) {
    int end = s.length();
    while (end > 0 && s.charAt(end - 1) == '/') {
      end--;
    }
    return s.substring(0, end);
  }

  private static String stripLeadingDotSlashes(String s) {
    int start = 0;
    while (s.startsWith("./", start)) {
      start += 2;
    }
    return s.substring(start);
  }

  /**
   * Re-packs the step's files from {@code archive} into {@code out}, checking them against the
   * step's hash when {@code verify}.
   *
   * @return the top-level paths written, to own and chmod
   * @throws SafeTar.TooLarge past the budget; {@link SafeTar.Refused} for a hostile archive;
   *     {@link Mismatch} when it is not what its hash says
   */
  static List<String> repack(Step step, Path archive, Path out, BuildBudget budget, boolean verify)
      throws StepFailed, IOException {
    long limit = budget.bytesLeft();
    FilesHash first = verify ? new FilesHash(step.src(), step.dest(), FIRST, Map.of()) : null;
    Set<String> targets = new LinkedHashSet<>();
    long expanded;
    try (SafeTar.Reader in = SafeTar.open(archive, limit);
        OutputStream file = Files.newOutputStream(out);
        TarArchiveOutputStream o = new TarArchiveOutputStream(file)) {
      // long names are given by putEntry's own PAX records, and big numbers in binary: the writer adds no PAX header of its own
      o.setLongFileMode(TarArchiveOutputStream.LONGFILE_ERROR);
      o.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_STAR);
      Map<String, String> staged = new HashMap<>();
      TarArchiveEntry e;
      byte[] buf = new byte[64 * 1024];
      while ((e = in.getNextEntry()) != null) {
        refuseUnsupported(step, e);
        String path = stripTrailingSlashes(stripLeadingDotSlashes(e.getName()));
        if (!path.isEmpty()) {
          for (String p : path.split("/")) {
            if (p.equals("..")) {
              throw new StepFailed(step.name(), "the uploaded files hold a path outside the context: "
                  + SafeTar.abbreviate(e.getName()));
            }
          }
          if (path.startsWith("/")) {
            throw new StepFailed(step.name(), "the uploaded files hold an absolute path: " + SafeTar.abbreviate(e.getName()));
          }
        }
        String target = path.isEmpty() ? null : target(step, path, e.isDirectory());
        boolean copied = target != null && (e.isFile() || e.isDirectory() || e.isSymbolicLink());
        boolean content = e.isFile() && !e.isLink();
        if (first != null) {
          hashHeader(first, step, archive, limit, e);
        }
        if (copied) {
          putEntry(step, o, e, path, target, staged, budget, limit);
        }
        if (content && (first != null || copied)) {
          int n;
          while ((n = in.read(buf)) >= 0) {
            if (first != null) {
              first.content(buf, 0, n);
            }
            if (copied) {
              o.write(buf, 0, n);
            }
          }
        }
        if (copied) {
          o.closeArchiveEntry();
          targets.add(topLevel(target, stripTrailingSlashes(step.destPath())));
        }
      }
      expanded = in.expanded();
    }
    if (first != null && !first.matches(step.hash())) {
      checkOtherFileSystems(step, archive, limit, first.pruned());
    }
    budget.charge(expanded);
    return new ArrayList<>(targets);
  }

  /**
   * The first reading's assumptions did not give the hash: the folders' entries are looked at,
   * and the hash computed again under the file systems whose folder sizes follow from them.
   *
   * @throws Mismatch when none gives it
   */
  private static void checkOtherFileSystems(Step step, Path archive, long limit, boolean prunedBefore)
      throws IOException, StepFailed {
    FilesHash second = new FilesHash(step.src(), step.dest(), SECOND, folders(archive, limit));
    try (SafeTar.Reader in = SafeTar.open(archive, limit)) {
      TarArchiveEntry e;
      byte[] buf = new byte[64 * 1024];
      while ((e = in.getNextEntry()) != null) {
        refuseUnsupported(step, e);
        hashHeader(second, step, archive, limit, e);
        if (e.isFile() && !e.isLink()) {
          int n;
          while ((n = in.read(buf)) >= 0) {
            second.content(buf, 0, n);
          }
        }
      }
    }
    if (second.matches(step.hash())) {
      return;
    }
    Set<FilesHash.Sizes> tried = new LinkedHashSet<>(FIRST);
    tried.addAll(SECOND);
    throw new Mismatch("the files uploaded under hash " + step.hash() + " are not what it says: their paths, modes and contents do not"
        + " give it for COPY " + SafeTar.abbreviate(step.src()) + " " + SafeTar.abbreviate(step.dest()) + ", whatever size their folders"
        + " are taken to have (as " + FilesHash.describe(List.copyOf(tried)) + " report it"
        + (prunedBefore || second.pruned() ? "; not every size of its biggest folders was tried" : "")
        + "); the upload is removed: upload the files again");
  }

  /** What the archive shows of each folder's entries, by the folder's path ("" for the context). */
  static Map<String, FilesHash.Folder> folders(Path archive, long limit) throws IOException {
    Map<String, long[]> acc = new HashMap<>();
    try (SafeTar.Reader in = SafeTar.open(archive, limit)) {
      TarArchiveEntry e;
      while ((e = in.getNextEntry()) != null) {
        String p = FilesHash.hashPath(e.getName());
        if (e.isDirectory()) {
          acc.computeIfAbsent(p, k -> new long[] {0, 0, 24}); // ext4's "." and ".." take 12 bytes each
        }
        if (p.isEmpty()) {
          continue;
        }
        int slash = p.lastIndexOf('/');
        String parent = slash < 0 ? "" : p.substring(0, slash);
        long len = SafeTar.utf8Length(slash < 0 ? p : p.substring(slash + 1));
        long[] a = acc.computeIfAbsent(parent, k -> new long[] {0, 0, 24}); // ext4's "." and ".." take 12 bytes each
        a[0]++;
        a[1] += len;
        a[2] += 8 + ((len + 3) / 4) * 4;
      }
    }
    Map<String, FilesHash.Folder> out = new HashMap<>();
    acc.forEach((k, a) -> out.put(k, new FilesHash.Folder((int) Math.min(Integer.MAX_VALUE, a[0]), a[1], a[2])));
    return out;
  }

  /** Where a path of the context lands, or null when the step does not copy it. */
  private static @Nullable String target(Step step, String path, boolean directory) {
    String rel = step.rel();
    String destBase = stripTrailingSlashes(step.destPath());
    boolean destIsDir = step.destPath().endsWith("/");
    String target;
    if (rel.isEmpty()) {
      target = destBase + "/" + path;
    } else if (path.equals(rel)) {
      target = directory || !destIsDir ? destBase : destBase + "/" + rel.substring(rel.lastIndexOf('/') + 1);
    } else if (path.startsWith(rel + "/")) {
      target = destBase + "/" + path.substring(rel.length() + 1);
    } else {
      return null;
    }
    return target.isEmpty() ? "/" : target;
  }

  private static void refuseUnsupported(Step step, TarArchiveEntry e) throws StepFailed {
    if (e.isSparse() || e.isGNUSparse() || e.isOldGNUSparse() || e.isPaxGNUSparse() || e.isStarSparse()) {
      throw new StepFailed(step.name(), "COPY " + step.src() + ": the uploaded files hold a sparse file ("
          + SafeTar.abbreviate(e.getName()) + "), which the SDKs never send");
    }
  }

  /** Hashes what an entry's header says (a file's content follows through {@link FilesHash#content}). */
  private static void hashHeader(FilesHash h, Step step, Path archive, long limit, TarArchiveEntry e)
      throws IOException, StepFailed {
    String path = FilesHash.hashPath(e.getName());
    int perm = e.getMode() & 07777;
    if (e.isDirectory()) {
      h.folder(path, perm, declaredSize(e));
    } else if (e.isSymbolicLink()) {
      h.symlink(path, perm, e.getLinkName());
    } else if (e.isLink()) {
      linkedContent(h, step, archive, limit, path, perm, e.getLinkName());
    } else if (e.isFile()) {
      h.file(path, perm, e.getSize());
    }
  }

  /** Puts an entry's copy, staged under its target, into the re-packed archive (its content follows). */
  private static void putEntry(Step step, TarArchiveOutputStream o, TarArchiveEntry e, String path, String target,
      Map<String, String> staged, BuildBudget budget, long limit) throws IOException, StepFailed {
    if (SafeTar.utf8Length(target) + CopyStep.STAGE.length() > SafeTar.MAX_NAME) {
      throw new StepFailed(step.name(), "COPY " + step.src() + ": " + SafeTar.abbreviate(target) + " would be longer"
          + " than " + SafeTar.MAX_NAME + " bytes");
    }
    if (!budget.entry()) {
      throw new SafeTar.TooLarge(limit);
    }
    String stagedName = CopyStep.STAGE.substring(1) + target + (e.isDirectory() ? "/" : "");
    String linkName = null;
    byte type;
    if (e.isSymbolicLink()) {
      type = TarArchiveEntry.LF_SYMLINK;
      linkName = e.getLinkName();
    } else if (e.isLink()) {
      type = TarArchiveEntry.LF_LINK;
      linkName = staged.get(stripTrailingSlashes(stripLeadingDotSlashes(e.getLinkName())));
      if (linkName == null) {
        throw new StepFailed(step.name(), "COPY " + step.src() + ": " + SafeTar.abbreviate(path) + " is a hard link to "
            + SafeTar.abbreviate(e.getLinkName()) + ", which is not among the files it copies before it");
      }
    } else {
      type = e.isDirectory() ? TarArchiveEntry.LF_DIR : TarArchiveEntry.LF_NORMAL;
      if (e.isFile()) {
        staged.put(path, stagedName);
      }
    }
    // commons-compress's writer shortens a long name one character at a time, encoding it again each time: quadratic
    // in the name's length (a 4096-byte name costs it 16 million characters). A long or non-ASCII name and link target
    // go in a PAX record written here instead, and the entry itself gets a short ASCII one.
    boolean plainName = plain(stagedName);
    boolean plainLink = linkName == null || plain(linkName);
    if (!plainName || !plainLink) {
      Map<String, String> records = new java.util.LinkedHashMap<>();
      if (!plainName) {
        records.put("path", stagedName);
      }
      if (!plainLink) {
        records.put("linkpath", linkName);
      }
      byte[] body = paxRecords(records);
      TarArchiveEntry pax = new TarArchiveEntry("PaxHeaders/entry", TarArchiveEntry.LF_PAX_EXTENDED_HEADER_LC);
      pax.setSize(body.length);
      o.putArchiveEntry(pax);
      o.write(body);
      o.closeArchiveEntry();
    }
    TarArchiveEntry copy = new TarArchiveEntry(plainName ? stagedName : "entry" + (e.isDirectory() ? "/" : ""), type);
    if (linkName != null) {
      copy.setLinkName(plainLink ? linkName : "link");
    }
    copy.setSize(e.isFile() && !e.isLink() ? e.getSize() : 0);
    copy.setMode(e.getMode());
    copy.setModTime(e.getModTime());
    o.putArchiveEntry(copy);
  }

  /** Whether a name fits a tar header's own field: ASCII, at most 100 bytes. */
  private static boolean plain(String name) {
    if (name.length() > 100) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      if (name.charAt(i) >= 0x80 || name.charAt(i) == 0) {
        return false;
      }
    }
    return true;
  }

  /** PAX records: {@code <length> <key>=<value>\n} each, the length counting itself. */
  static byte[] paxRecords(Map<String, String> records) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    records.forEach((k, v) -> {
      byte[] kv = (" " + k + "=" + v + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int len = kv.length + Integer.toString(kv.length).length();
      if (Integer.toString(len).length() != Integer.toString(kv.length).length()) {
        len++;
      }
      out.writeBytes(Integer.toString(len).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.writeBytes(kv);
    });
    return out.toByteArray();
  }

  /** The folder size an entry declares, if any. */
  private static @Nullable Long declaredSize(TarArchiveEntry e) {
    String v = e.getExtraPaxHeader(FilesHash.DECLARED_SIZE);
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v.strip());
    } catch (NumberFormatException x) {
      return null;
    }
  }

  /** A hard link's entry in the hash: its target's size and content, read again from the archive. */
  private static void linkedContent(FilesHash h, Step step, Path archive, long limit, String path, int perm, String linkName)
      throws IOException, StepFailed {
    String wanted = FilesHash.hashPath(linkName);
    try (SafeTar.Reader in = SafeTar.open(archive, limit)) {
      TarArchiveEntry t;
      while ((t = in.getNextEntry()) != null) {
        if (t.isFile() && !t.isLink() && FilesHash.hashPath(t.getName()).equals(wanted)) {
          h.file(path, perm, t.getSize());
          byte[] buf = new byte[64 * 1024];
          int n;
          while ((n = in.read(buf)) >= 0) {
            h.content(buf, 0, n);
          }
          return;
        }
      }
    }
    throw new StepFailed(step.name(), "COPY " + step.src() + ": " + SafeTar.abbreviate(path) + " is a hard link to "
        + SafeTar.abbreviate(linkName) + ", which the uploaded files do not hold");
  }

  private static String topLevel(String target, String destBase) {
    if (target.equals(destBase) || destBase.isEmpty()) {
      return target.isEmpty() ? "/" : target;
    }
    String rest = target.substring(destBase.length() + 1);
    int slash = rest.indexOf('/');
    return destBase + "/" + (slash < 0 ? rest : rest.substring(0, slash));
  }
}
