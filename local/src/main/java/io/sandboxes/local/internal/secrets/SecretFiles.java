package io.sandboxes.local.internal.secrets;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The folder the secrets live in, one file each: the folder is the server user's alone (0700),
 * each file too (0600, from its creation, before a byte is in it), and a file is replaced whole
 * (written beside, synced, renamed over, the folder synced) so a crash leaves the old file or the
 * new one, never half of either.
 */
final class SecretFiles {
  private static final Set<PosixFilePermission> FOLDER = PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
  private static final String SUFFIX = ".json";
  private static final String TEMP = ".tmp-";

  private final Path folder;
  private final boolean posix;

  private SecretFiles(Path folder, boolean posix) {
    this.folder = folder;
    this.posix = posix;
  }

  /**
   * Opens the folder, making it (0700) when missing; an existing one is set to 0700, and
   * temporary files a crash left in it are removed.
   *
   * @throws IOException when the path is a symbolic link or no folder, or cannot be made
   */
  static SecretFiles open(Path folder) throws IOException {
    if (Files.isSymbolicLink(folder)) {
      throw new IOException("the secrets folder " + folder + " is a symbolic link: refused");
    }
    Files.createDirectories(folder.getParent());
    boolean posix = Files.getFileAttributeView(folder.getParent(), PosixFileAttributeView.class) != null;
    try {
      if (posix) {
        Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(FOLDER));
      } else {
        Files.createDirectory(folder);
      }
    } catch (FileAlreadyExistsException e) {
      if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
        throw new IOException("the secrets folder " + folder + " is not a folder", e);
      }
    }
    if (posix) {
      Files.setPosixFilePermissions(folder, FOLDER); // umask, or an older folder
    }
    SecretFiles files = new SecretFiles(folder, posix);
    try (var entries = Files.list(folder)) {
      for (Path p : entries.toList()) {
        if (p.getFileName().toString().startsWith(TEMP)) {
          Files.deleteIfExists(p);
        }
      }
    }
    return files;
  }

  Path folder() {
    return folder;
  }

  /** @return the secrets' files, by name order */
  List<Path> list() throws IOException {
    List<Path> out = new ArrayList<>();
    try (var entries = Files.list(folder)) {
      for (Path p : entries.sorted().toList()) {
        String n = p.getFileName().toString();
        if (n.endsWith(SUFFIX) && !n.startsWith(".") && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
          out.add(p);
        }
      }
    }
    return out;
  }

  byte[] read(Path file) throws IOException {
    return Files.readAllBytes(file);
  }

  /** Replaces (or makes) the file of secret {@code id} with {@code content}, atomically. */
  void write(String id, byte[] content) throws IOException {
    Path tmp = folder.resolve(TEMP + UUID.randomUUID());
    List<FileAttribute<?>> attrs = posix ? List.of(PosixFilePermissions.asFileAttribute(FILE)) : List.of();
    try {
      try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
          attrs.toArray(new FileAttribute<?>[0]))) {
        ByteBuffer buf = ByteBuffer.wrap(content);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      Files.move(tmp, file(id), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
    syncFolder();
  }

  void delete(String id) throws IOException {
    Files.deleteIfExists(file(id));
    syncFolder();
  }

  /** Removes every file and the folder. */
  void deleteAll() throws IOException {
    try (var entries = Files.list(folder)) {
      for (Path p : entries.toList()) {
        Files.deleteIfExists(p);
      }
    }
    Files.deleteIfExists(folder);
  }

  private Path file(String id) {
    return folder.resolve(id + SUFFIX);
  }

  private void syncFolder() throws IOException {
    try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException e) {
      // some file systems cannot open a folder for syncing; the rename itself is still atomic
    }
  }
}
