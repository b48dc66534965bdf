package io.sandboxes.local.internal.build;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The files hash E2B's SDKs give a COPY step, computed again from the archive uploaded under it,
 * so an upload is used only under the hash of what it holds: SHA-256 over {@code COPY <src>
 * <dest>}, then for each entry, in the archive's order, its path relative to the context, its
 * {@code st_mode} and {@code st_size} in decimal, and a file's content or a link's target.
 *
 * <p>An archive carries everything in that but one figure: a folder's {@code st_size}, which
 * depends on the file system the context was on (the SDKs' tars give folders size 0). An archive
 * may declare it (the {@code SANDBOXES.size} PAX record this project's Java SDK writes);
 * otherwise each folder's size is taken as each common file system reports it (see
 * {@link Sizes}), one digest per assumption, and the upload matches when any of them gives the
 * hash. A folder's size says nothing about what is built, so whichever assumption matched, the
 * archive's paths, modes, contents and links are exactly those the hash was made of.
 */
final class FilesHash {
  /** The PAX record in which an archive may declare a folder's {@code st_size}. */
  static final String DECLARED_SIZE = "SANDBOXES.size";
  /** The most digests kept at once (assumptions about big ext4 folders multiply them). */
  static final int MAX_DIGESTS = 64;
  /** ext4's usable bytes per directory block (4096 less its checksum tail). */
  private static final int EXT4_BLOCK = 4084;

  /** What the archive shows of a folder's own entries (those of its children it holds). */
  record Folder(int children, long nameBytes, long ext4Bytes) {
    static final Folder UNKNOWN = new Folder(-1, -1, -1);

    boolean known() {
      return children >= 0;
    }
  }

  /** How a kind of file system reports a folder's size: one or more guesses per folder. */
  enum Sizes {
    /** ext4, XFS (past its short form) and overlayfs on them: whole 4096-byte blocks. */
    BLOCKS("ext4/XFS/overlayfs blocks"),
    /** Windows (and file systems that report none). */
    ZERO("0"),
    /** tmpfs: 40, and 20 per entry. */
    TMPFS("tmpfs"),
    /** btrfs: twice the bytes of its entries' names. */
    BTRFS("btrfs"),
    /** XFS short-form folders, 32-bit inode numbers: 6, and 8 plus the name per entry. */
    XFS("XFS"),
    /** XFS short-form folders, 64-bit inode numbers: 10, and 12 plus the name per entry. */
    XFS64("XFS (64-bit inodes)"),
    /** APFS: 32 per entry, counting {@code .} and {@code ..}. */
    APFS("APFS"),
    /** ZFS: one per entry, counting {@code .} and {@code ..}. */
    ZFS("ZFS");

    final String label;

    Sizes(String label) {
      this.label = label;
    }

    /** Whether its guesses need to know the folder's entries (a first look through the archive). */
    boolean needsEntries() {
      return this != ZERO;
    }

    /** The sizes to try for a folder, likeliest first. */
    List<Long> guesses(Folder f) {
      return switch (this) {
        case BLOCKS -> {
          if (!f.known() || f.ext4Bytes() <= EXT4_BLOCK) {
            yield List.of(4096L);
          }
          // past one block: linear (n blocks), or indexed (a root block and leaves from full to half full)
          long full = (f.ext4Bytes() + EXT4_BLOCK - 1) / EXT4_BLOCK;
          Set<Long> out = new LinkedHashSet<>();
          for (long blocks = full + 1; blocks <= 2 * full + 2; blocks++) {
            out.add(blocks * 4096);
          }
          out.add(full * 4096);
          yield List.copyOf(out);
        }
        case ZERO -> List.of(0L);
        case TMPFS -> List.of(40L + 20L * f.children());
        case BTRFS -> List.of(2 * f.nameBytes());
        case XFS -> List.of(xfs(6 + 8L * f.children() + f.nameBytes()));
        case XFS64 -> List.of(xfs(10 + 12L * f.children() + f.nameBytes()));
        case APFS -> List.of(32L * (f.children() + 2));
        case ZFS -> List.of(f.children() + 2L);
      };
    }

    private static long xfs(long shortForm) {
      return shortForm <= 336 ? shortForm : 4096;
    }
  }

  private record Branch(Sizes sizes, MessageDigest digest) {}

  private final Map<String, Folder> folders;
  private List<Branch> live = new ArrayList<>();
  private boolean pruned;

  /**
   * @param src the COPY's source as its step names it
   * @param dest its destination as its step names it
   * @param assumptions the file systems to assume for undeclared folder sizes
   * @param folders what the archive shows of each folder, by its path (empty when not looked)
   */
  FilesHash(String src, String dest, List<Sizes> assumptions, Map<String, Folder> folders) {
    this.folders = folders;
    byte[] head = ("COPY " + src + " " + dest).getBytes(StandardCharsets.UTF_8);
    for (Sizes s : assumptions) {
      MessageDigest d = sha256();
      d.update(head);
      live.add(new Branch(s, d));
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private void all(byte[] b) {
    all(b, 0, b.length);
  }

  private void all(byte[] b, int off, int len) {
    for (Branch br : live) {
      br.digest().update(b, off, len);
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A folder entry: its path, its permission bits, and the size it declares, if any. */
  void folder(String path, int perm, @Nullable Long declared) {
    all(utf8(path));
    all(utf8(Integer.toString(040000 | (perm & 07777))));
    if (declared != null) {
      all(utf8(Long.toString(declared)));
      return;
    }
    Folder f = folders.getOrDefault(path, Folder.UNKNOWN);
    List<Branch> next = new ArrayList<>();
    for (int b = 0; b < live.size(); b++) {
      Branch br = live.get(b);
      List<Long> guesses = br.sizes().guesses(f);
      // the likeliest guess goes on in this digest; the others in copies, while there is room
      // (each branch still to come keeps one digest)
      for (int i = 1; i < guesses.size(); i++) {
        if (next.size() + (live.size() - b) >= MAX_DIGESTS) {
          pruned = true;
          break;
        }
        try {
          MessageDigest d = (MessageDigest) br.digest().clone();
          d.update(utf8(Long.toString(guesses.get(i))));
          next.add(new Branch(br.sizes(), d));
        } catch (CloneNotSupportedException e) {
          throw new IllegalStateException(e);
        }
      }
      br.digest().update(utf8(Long.toString(guesses.get(0))));
      next.add(br);
    }
    live = next;
  }

  /** A file entry; its content follows through {@link #content}. */
  void file(String path, int perm, long size) {
    all(utf8(path));
    all(utf8(Integer.toString(0100000 | (perm & 07777))));
    all(utf8(Long.toString(size)));
  }

  /** A symbolic link entry: its size is its target's length, and its target its content. */
  void symlink(String path, int perm, String target) {
    byte[] t = utf8(target);
    all(utf8(path));
    all(utf8(Integer.toString(0120000 | (perm & 07777))));
    all(utf8(Long.toString(t.length)));
    all(t);
  }

  /** Part of the current file's content. */
  void content(byte[] b, int off, int len) {
    all(b, off, len);
  }

  /** @return whether some assumption gives {@code expected} */
  boolean matches(String expected) {
    for (Branch br : live) {
      if (HexFormat.of().formatHex(br.digest().digest()).equals(expected)) {
        return true;
      }
    }
    return false;
  }

  /** @return whether some guesses were left untried (more than {@link #MAX_DIGESTS} at once) */
  boolean pruned() {
    return pruned;
  }

  /** The assumptions tried, for a message. */
  static String describe(List<Sizes> assumptions) {
    return String.join(", ", assumptions.stream().map(s -> s.label).toList());
  }

  /** The path a hash gives an archive entry's name: no trailing slash, the context itself as "". */
  static String hashPath(String entryName) {
    int end = entryName.length();
    while (end > 0 && entryName.charAt(end - 1) == '/') {
      end--;
    }
    String p = entryName.substring(0, end);
    return p.equals(".") ? "" : p;
  }
}
