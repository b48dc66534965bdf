package io.sandboxes.local.internal.build;

import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.jspecify.annotations.Nullable;

/**
 * An uploaded build archive read as hostile input: a tar (gzipped or not) through commons-compress,
 * with what one upload may cost the server bounded before commons-compress spends it.
 *
 * <ul>
 *   <li>Every byte it expands to (headers, names, data, entries skipped) is counted against a
 *       limit the caller gives (the build's budget): past it the read fails with
 *       {@link TooLarge}, so a gzip bomb costs at most that much CPU and nothing else.
 *   <li>The headers of one entry (its PAX records, GNU long name and link, sparse maps) may take
 *       at most {@link #MAX_HEADER_BYTES}: commons-compress holds them in memory, so a 1 GiB
 *       name in a 1 MiB upload would otherwise be 1 GiB of the server's heap.
 *   <li>An entry's name and link target may be at most {@link #MAX_NAME} bytes (Linux's
 *       {@code PATH_MAX}).
 * </ul>
 */
final class SafeTar {
  /** The longest an entry's name or link target may be, in bytes of UTF-8. */
  static final int MAX_NAME = 4096;
  /** The most the headers of one entry may take, records, PAX data and long names together. */
  static final int MAX_HEADER_BYTES = 256 * 1024;

  private SafeTar() {}

  /** The archive expands to more than the limit. */
  static final class TooLarge extends IOException {
    private static final long serialVersionUID = 1L;
    final long limit;

    TooLarge(long limit) {
      super("the archive expands to more than " + limit + " bytes");
      this.limit = limit;
    }
  }

  /** The archive holds what is refused (an oversized name or header, a malformed entry). */
  static final class Refused extends IOException {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }

  /**
   * Opens an archive file, gunzipping it when it starts with gzip's magic bytes.
   *
   * @param limit the most bytes it may expand to
   */
  static Reader open(Path archive, long limit) throws IOException {
    InputStream raw = new BufferedInputStream(Files.newInputStream(archive), 64 * 1024);
    try {
      raw.mark(2);
      int a = raw.read();
      int b = raw.read();
      raw.reset();
      InputStream plain = a == 0x1f && b == 0x8b ? new GZIPInputStream(raw, 64 * 1024) : raw;
      return new Reader(new Counting(plain, limit));
    } catch (IOException | RuntimeException e) {
      raw.close();
      throw e;
    }
  }

  /** UTF-8 bytes of a string, counted without making them. */
  static long utf8Length(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /** The expanded stream, counted; during an entry's headers, counted against {@link #MAX_HEADER_BYTES} too. */
  private static final class Counting extends FilterInputStream {
    private final long limit;
    long count;
    long headerStart = -1;

    Counting(InputStream in, long limit) {
      super(in);
      this.limit = limit;
    }

    private void counted(long n) throws IOException {
      if (n <= 0) {
        return;
      }
      count += n;
      if (count > limit) {
        throw new TooLarge(limit);
      }
      if (headerStart >= 0 && count - headerStart > MAX_HEADER_BYTES) {
        throw new Refused("an entry's headers take more than " + MAX_HEADER_BYTES + " bytes (names are at most " + MAX_NAME
            + " bytes)");
      }
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        counted(1);
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      counted(n);
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      // read, not skipped: a gzip stream has no shortcut, and every byte is counted
      byte[] buf = new byte[(int) Math.min(n, 64 * 1024)];
      long done = 0;
      while (done < n) {
        int r = read(buf, 0, (int) Math.min(buf.length, n - done));
        if (r < 0) {
          break;
        }
        done += r;
      }
      return done;
    }
  }

  /** The tar reader: commons-compress's, with the bounds above. */
  static final class Reader extends TarArchiveInputStream {
    private final Counting counting;
    private int depth;

    private Reader(Counting counting) {
      super(counting);
      this.counting = counting;
    }

    /** @return how many bytes the archive has expanded to so far */
    long expanded() {
      return counting.count;
    }

    @Override
    public @Nullable TarArchiveEntry getNextEntry() throws IOException {
      if (depth == 0) {
        // the rest of the current entry is data, read (and counted) as such before its successor's headers
        TarArchiveEntry current = getCurrentEntry();
        if (current != null) {
          byte[] buf = new byte[64 * 1024];
          while (read(buf, 0, buf.length) >= 0) {
            // drained
          }
        }
        counting.headerStart = counting.count;
      }
      depth++;
      TarArchiveEntry e;
      try {
        e = super.getNextEntry();
      } finally {
        depth--;
        if (depth == 0) {
          counting.headerStart = -1;
        }
      }
      if (e != null && depth == 0) {
        if (utf8Length(e.getName()) > MAX_NAME) {
          throw new Refused("an entry's name is longer than " + MAX_NAME + " bytes");
        }
        if (e.getLinkName() != null && utf8Length(e.getLinkName()) > MAX_NAME) {
          throw new Refused("the link target of " + abbreviate(e.getName()) + " is longer than " + MAX_NAME + " bytes");
        }
      }
      return e;
    }
  }

  /** A name for a message: at most 200 characters of it. */
  static String abbreviate(String name) {
    return name.length() <= 200 ? name : name.substring(0, 200) + "… (" + utf8Length(name) + " bytes)";
  }
}
