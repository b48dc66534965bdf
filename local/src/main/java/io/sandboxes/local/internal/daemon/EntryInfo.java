package io.sandboxes.local.internal.daemon;

import java.time.Instant;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A file-system entry as the daemon saw it ({@code lstat}), with what a symlink points at.
 *
 * @param name the last path element
 * @param path the path as asked for, made absolute (a listing joins it with each relative path)
 * @param type what the entry itself is
 * @param mode the full {@code st_mode}
 * @param size size in bytes
 * @param owner the owner's name from the sandbox's /etc/passwd, or the uid as text
 * @param group likewise from /etc/group
 * @param symlinkTarget for a symlink: its fully resolved target, or the raw link text when broken
 * @param targetType for a symlink: what its target is, null when broken
 * @param targetMode for a symlink: the target's {@code st_mode}, 0 when broken
 * @param targetSize for a symlink: the target's size
 * @param metadata the {@code user.e2b.*} extended attributes, with that prefix removed
 */
public record EntryInfo(
    String name,
    String path,
    Type type,
    int mode,
    long size,
    int uid,
    int gid,
    String owner,
    String group,
    Instant modified,
    @Nullable String symlinkTarget,
    @Nullable Type targetType,
    int targetMode,
    long targetSize,
    Map<String, String> metadata) {

  /** The prefix of the extended attributes that carry envd's file metadata. */
  public static final String METADATA_PREFIX = "user.e2b.";

  /** What an entry is. */
  public enum Type { FILE, DIRECTORY, SYMLINK, OTHER }

  /** The permission bits alone. */
  public int permissions() {
    return mode & 07777;
  }

  static @Nullable Type type(int code) throws ProtocolException {
    return switch (code) {
      case 0 -> null;
      case 1 -> Type.FILE;
      case 2 -> Type.DIRECTORY;
      case 3 -> Type.SYMLINK;
      case 4 -> Type.OTHER;
      default -> throw new ProtocolException("unknown entry type " + code);
    };
  }

  /** An entry that is a whole payload. */
  static EntryInfo whole(byte[] payload) throws ProtocolException {
    Wire.In in = new Wire.In(payload);
    EntryInfo e = read(in);
    in.end();
    return e;
  }

  static EntryInfo read(Wire.In in) throws ProtocolException {
    String name = in.str(Wire.MAX_NAME);
    String path = in.str(Wire.MAX_NAME);
    Type type = type(in.u8());
    if (type == null) {
      throw new ProtocolException("an entry without a type");
    }
    int mode = (int) in.u32();
    long size = in.i64();
    int uid = (int) in.u32();
    int gid = (int) in.u32();
    String owner = in.str(Wire.MAX_NAME);
    String group = in.str(Wire.MAX_NAME);
    long sec = in.i64();
    long nsec = in.u32();
    if (nsec >= 1_000_000_000L) {
      throw new ProtocolException("bad nanoseconds " + nsec);
    }
    String target = in.str(Wire.MAX_NAME);
    Type targetType = type(in.u8());
    int targetMode = (int) in.u32();
    long targetSize = in.i64();
    Map<String, byte[]> raw = readPairs(in);
    Map<String, String> meta = new java.util.TreeMap<>();
    raw.forEach((k, v) -> {
      if (k.startsWith(METADATA_PREFIX)) {
        meta.put(k.substring(METADATA_PREFIX.length()), new String(v, java.nio.charset.StandardCharsets.UTF_8));
      }
    });
    return new EntryInfo(name, path, type, mode, size, uid, gid, owner, group, Instant.ofEpochSecond(sec, nsec),
        type == Type.SYMLINK ? target : null, targetType, targetMode, targetSize, Map.copyOf(meta));
  }

  /** The most extended attributes one answer may carry. */
  static final int MAX_ATTRIBUTES = 4096;
  /** The longest attribute name (XATTR_NAME_MAX) and value (XATTR_SIZE_MAX) Linux has. */
  static final int MAX_ATTRIBUTE_NAME = 255;
  static final int MAX_ATTRIBUTE_VALUE = 65536;

  static Map<String, byte[]> readPairs(Wire.In in) throws ProtocolException {
    long n = in.u32();
    if (n > MAX_ATTRIBUTES) {
      throw new ProtocolException(n + " attributes, over the limit of " + MAX_ATTRIBUTES);
    }
    Map<String, byte[]> out = new java.util.LinkedHashMap<>();
    for (long i = 0; i < n; i++) {
      String name = in.str(MAX_ATTRIBUTE_NAME);
      if (out.put(name, in.bytes(MAX_ATTRIBUTE_VALUE)) != null) {
        throw new ProtocolException("attribute " + name + " twice");
      }
    }
    return out;
  }
}
