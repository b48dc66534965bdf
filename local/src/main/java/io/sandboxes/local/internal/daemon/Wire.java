package io.sandboxes.local.internal.daemon;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The daemon protocol's constants and payload encoding; {@code daemon/src/envd.h} must agree.
 *
 * <p>A frame is a 12-byte header (payload length u32, stream u32, type u8, flags u8, two zero
 * bytes; big-endian) and at most {@link #MAX_PAYLOAD} bytes of payload. Payload fields are
 * big-endian integers, strings and byte strings as a u32 length and the bytes, and lists as a u32
 * count and the items.
 */
final class Wire {
  private Wire() {}

  /** The protocol this host speaks. */
  static final int VERSION = 3;
  /**
   * The oldest protocol this host still accepts: a daemon of version 2 (started by an earlier
   * server, and kept running across its restarts) speaks everything but {@link #FILE_STATFS}.
   */
  static final int OLDEST_VERSION = 2;
  static final int HEADER = 12;
  static final int MAX_PAYLOAD = 1 << 20;
  /**
   * The credit a stream from the host (FILE_DATA, TCP_SEND) has, which the daemon returns as it
   * writes; also the most credit the host lets one stream to it have.
   */
  static final int WINDOW = 1 << 20;
  /**
   * The credit a stream to the host (PROC_OUTPUT, FILE_CHUNK, TCP_DATA, WATCH_EVENT) starts
   * with; the host grants more from the connection's {@link Budget}.
   */
  static final int INITIAL_CREDIT = 8 * 1024;
  /**
   * What each data frame to the host costs in credit beyond its data bytes, empty ones included:
   * about what the host holds per queued frame besides the bytes, so that credit bounds memory
   * however small the frames are.
   */
  static final int FRAME_COST = 128;
  /** The longest name or path (and owner, group, link target, watch path) an answer may carry. */
  static final int MAX_NAME = 4096;

  // host -> daemon
  static final int PING = 0x01;
  static final int CANCEL = 0x02;
  static final int CREDIT = 0x03;
  static final int PROC_START = 0x10;
  static final int PROC_ATTACH = 0x11;
  static final int PROC_INPUT = 0x12;
  static final int PROC_CLOSE_STDIN = 0x13;
  static final int PROC_SIGNAL = 0x14;
  static final int PROC_RESIZE = 0x15;
  static final int PROC_LIST = 0x16;
  static final int FILE_STAT = 0x20;
  static final int FILE_LIST = 0x21;
  static final int FILE_READ = 0x22;
  static final int FILE_WRITE = 0x23;
  static final int FILE_DATA = 0x24;
  static final int FILE_MKDIR = 0x25;
  static final int FILE_REMOVE = 0x26;
  static final int FILE_RENAME = 0x27;
  static final int XATTR_GET = 0x28;
  static final int XATTR_SET = 0x29;
  static final int WATCH = 0x2A;
  static final int TCP_CONNECT = 0x2B;
  static final int TCP_SEND = 0x2C;
  /** From version {@link #FILE_STATFS_SINCE}. */
  static final int FILE_STATFS = 0x2D;
  /** The first protocol version with {@link #FILE_STATFS}. */
  static final int FILE_STATFS_SINCE = 3;

  // daemon -> host
  static final int HELLO = 0x40;
  static final int OK = 0x41;
  static final int ERROR = 0x42;
  static final int DCREDIT = 0x43;
  static final int PROC_STARTED = 0x50;
  static final int PROC_OUTPUT = 0x51;
  static final int PROC_EXIT = 0x52;
  static final int PROC_INFO = 0x53;
  static final int ENTRY = 0x60;
  static final int FILE_CHUNK = 0x61;
  static final int XATTRS = 0x62;
  static final int WATCH_EVENT = 0x63;
  static final int TCP_CONNECTED = 0x64;
  static final int TCP_DATA = 0x65;
  static final int FS_INFO = 0x66;

  static final int FLAG_FIN = 0x01;

  static boolean isDaemonType(int type) {
    return switch (type) {
      case HELLO, OK, ERROR, DCREDIT, PROC_STARTED, PROC_OUTPUT, PROC_EXIT, PROC_INFO, ENTRY, FILE_CHUNK, XATTRS,
          WATCH_EVENT, TCP_CONNECTED, TCP_DATA, FS_INFO -> true;
      default -> false;
    };
  }

  /** A payload being written. */
  static final class Out {
    private final ByteArrayOutputStream b = new ByteArrayOutputStream(64);

    Out u8(int v) {
      b.write(v);
      return this;
    }

    Out u16(int v) {
      b.write(v >>> 8);
      b.write(v);
      return this;
    }

    Out u32(long v) {
      b.write((int) (v >>> 24));
      b.write((int) (v >>> 16));
      b.write((int) (v >>> 8));
      b.write((int) v);
      return this;
    }

    Out bytes(byte[] v) {
      u32(v.length);
      b.writeBytes(v);
      return this;
    }

    Out str(String v) {
      return bytes(v.getBytes(StandardCharsets.UTF_8));
    }

    Out strs(List<String> v) {
      u32(v.size());
      v.forEach(this::str);
      return this;
    }

    byte[] toBytes() {
      return b.toByteArray();
    }
  }

  /** A received payload being read; any shortfall or leftover is a {@link ProtocolException}. */
  static final class In {
    private final byte[] p;
    private int off;

    In(byte[] p) {
      this(p, 0);
    }

    In(byte[] p, int off) {
      this.p = p;
      this.off = off;
    }

    private void need(long n) throws ProtocolException {
      if (n < 0 || p.length - off < n) {
        throw new ProtocolException("a payload ended early");
      }
    }

    int u8() throws ProtocolException {
      need(1);
      return p[off++] & 0xff;
    }

    int u16() throws ProtocolException {
      need(2);
      int v = ((p[off] & 0xff) << 8) | (p[off + 1] & 0xff);
      off += 2;
      return v;
    }

    long u32() throws ProtocolException {
      need(4);
      long v = ((p[off] & 0xffL) << 24) | ((p[off + 1] & 0xffL) << 16) | ((p[off + 2] & 0xffL) << 8) | (p[off + 3] & 0xffL);
      off += 4;
      return v;
    }

    int i32() throws ProtocolException {
      return (int) u32();
    }

    long i64() throws ProtocolException {
      return (u32() << 32) | u32();
    }

    byte[] bytes() throws ProtocolException {
      long n = u32();
      need(n);
      byte[] v = java.util.Arrays.copyOfRange(p, off, off + (int) n);
      off += (int) n;
      return v;
    }

    String str() throws ProtocolException {
      return new String(bytes(), StandardCharsets.UTF_8);
    }

    /** A string of at most {@code max} bytes; a longer one is refused before it is copied. */
    String str(int max) throws ProtocolException {
      return new String(bytes(max), StandardCharsets.UTF_8);
    }

    /** A byte string of at most {@code max} bytes; a longer one is refused before it is copied. */
    byte[] bytes(int max) throws ProtocolException {
      int at = off;
      long n = u32();
      if (n > max) {
        off = at;
        throw new ProtocolException("a field of " + n + " bytes, over its limit of " + max);
      }
      off = at;
      return bytes();
    }

    List<String> strs() throws ProtocolException {
      long n = u32();
      need(n * 4);
      List<String> v = new ArrayList<>((int) n);
      for (long i = 0; i < n; i++) {
        v.add(str());
      }
      return v;
    }

    void end() throws ProtocolException {
      if (off != p.length) {
        throw new ProtocolException("a payload has " + (p.length - off) + " bytes too many");
      }
    }
  }
}
