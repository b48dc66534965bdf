package io.sandboxes;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

/**
 * Tar archives of local folders, for {@link Sandbox#importFiles} and {@link Sandbox#exportFiles}:
 * pack a folder (rooted at its own name, as a sandbox export is) and unpack an archive safely.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=tars :
 * sandbox.importFiles("/home/user", Tars.pack(Path.of("my-app")));          // -> /home/user/my-app/...
 * Tars.unpack(sandbox.exportFiles("/home/user/my-app/dist"), Path.of("out")); // -> out/dist/...
 * }
 *
 * @since 0.1
 */
public final class Tars {
  private Tars() {}

  /**
   * Packs a local folder as tar, entries named {@code <folder name>/...}. Ownership is recorded as
   * 0 and setuid/setgid/sticky bits are left out; symbolic links are stored as links.
   *
   * @param folder the local folder to pack
   * @return the archive (held in memory)
   */
  public static InputStream pack(Path folder) {
    Objects.requireNonNull(folder, "folder");
    if (!Files.isDirectory(folder)) {
      throw new IllegalArgumentException("not a folder: " + folder);
    }
    Path root = folder.toAbsolutePath().normalize();
    String base = root.getFileName() == null ? "root" : root.getFileName().toString();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (TarArchiveOutputStream tar = new TarArchiveOutputStream(bytes); Stream<Path> walk = Files.walk(root)) {
      tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
      tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
      for (Path p : (Iterable<Path>) walk.sorted()::iterator) {
        String name = base + (p.equals(root) ? "" : "/" + root.relativize(p).toString().replace('\\', '/'));
        TarArchiveEntry e;
        if (Files.isSymbolicLink(p)) {
          e = new TarArchiveEntry(name, TarArchiveEntry.LF_SYMLINK);
          e.setLinkName(Files.readSymbolicLink(p).toString());
        } else {
          e = new TarArchiveEntry(p.toFile(), Files.isDirectory(p) ? name + "/" : name);
        }
        e.setIds(0, 0);
        e.setUserName("");
        e.setGroupName("");
        if (!Files.isSymbolicLink(p)) {
          int type = e.getMode() & ~07777;
          e.setMode(type | modeOf(p, e.getMode() & 0777));
        }
        tar.putArchiveEntry(e);
        if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
          Files.copy(p, tar);
        }
        tar.closeArchiveEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("packing " + folder + " failed: " + e.getMessage(), e);
    }
    return new java.io.ByteArrayInputStream(bytes.toByteArray());
  }

  /**
   * Unpacks a tar archive into a local folder. Entries that would land outside it (absolute
   * paths, {@code ..}, links pointing out) are refused; ownership is not restored and
   * setuid/setgid/sticky bits are dropped.
   *
   * @param archive the tar archive; read to its end, not closed
   * @param folder the local folder to unpack into, created if missing
   * @return the paths written, in archive order
   * @throws SandboxException when an entry would escape the folder
   */
  public static List<Path> unpack(InputStream archive, Path folder) {
    Objects.requireNonNull(archive, "archive");
    Objects.requireNonNull(folder, "folder");
    Path root = folder.toAbsolutePath().normalize();
    List<Path> written = new java.util.ArrayList<>();
    try (TarArchiveInputStream tar = new TarArchiveInputStream(archive)) {
      Files.createDirectories(root);
      TarArchiveEntry e;
      while ((e = tar.getNextEntry()) != null) {
        Path target = root.resolve(e.getName()).normalize();
        if (!target.startsWith(root) || Path.of(e.getName()).isAbsolute()) {
          throw new SandboxException("refusing archive entry '" + e.getName() + "': it would land outside " + root);
        }
        if (e.isDirectory()) {
          Files.createDirectories(target);
        } else if (e.isSymbolicLink()) {
          Path linkTarget = target.getParent().resolve(e.getLinkName()).normalize();
          if (Path.of(e.getLinkName()).isAbsolute() || !linkTarget.startsWith(root)) {
            throw new SandboxException("refusing link '" + e.getName() + "' -> '" + e.getLinkName() + "': it points outside " + root);
          }
          Files.createDirectories(target.getParent());
          Files.deleteIfExists(target);
          Files.createSymbolicLink(target, Path.of(e.getLinkName()));
        } else if (e.isFile()) {
          Files.createDirectories(target.getParent());
          if (Files.isSymbolicLink(target)) {
            throw new SandboxException("refusing to write '" + e.getName() + "' through a symbolic link");
          }
          Files.copy(tar, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
          setMode(target, e.getMode() & 0777);
        } else {
          continue;
        }
        written.add(target);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("unpacking into " + folder + " failed: " + e.getMessage(), e);
    }
    return written;
  }

  private static int modeOf(Path p, int fallback) throws IOException {
    try {
      int mode = 0;
      for (PosixFilePermission perm : Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS)) {
        mode |= 1 << (8 - perm.ordinal());
      }
      return mode;
    } catch (UnsupportedOperationException notPosix) {
      return fallback;
    }
  }

  private static void setMode(Path p, int mode) throws IOException {
    try {
      Set<PosixFilePermission> perms = java.util.EnumSet.noneOf(PosixFilePermission.class);
      PosixFilePermission[] order = {PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_READ, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OWNER_READ};
      for (int i = 0; i < order.length; i++) {
        if ((mode & (1 << i)) != 0) {
          perms.add(order[i]);
        }
      }
      Files.setPosixFilePermissions(p, perms);
    } catch (UnsupportedOperationException notPosix) {
      // a file system without POSIX modes keeps its defaults
    }
  }
}
