package io.sandboxes.e2b.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Splits a byte stream into lines at {@code \n} and decodes each whole line as UTF-8. The split is
 * on bytes, and a newline byte never occurs inside a multi-byte UTF-8 character, so a character
 * that arrives split across network chunks is decoded whole. A line longer than the limit fails
 * the stream instead of growing memory. Not thread-safe.
 */
public final class NdjsonLines {
  private final InputStream in;
  private final int maxLine;
  private final byte[] buf = new byte[64 * 1024];
  private int pos;
  private int end;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  /**
   * @param in the stream
   * @param maxLine the longest line accepted, in bytes
   */
  public NdjsonLines(InputStream in, int maxLine) {
    this.in = in;
    this.maxLine = maxLine;
  }

  /**
   * @return the next line without its newline, or null at the end of the stream (a last line
   *     without a newline is returned first)
   * @throws IOException when reading fails or a line is longer than the limit
   */
  public @Nullable String next() throws IOException {
    while (true) {
      for (int i = pos; i < end; i++) {
        if (buf[i] == '\n') {
          append(pos, i - pos);
          pos = i + 1;
          String s = line.toString(StandardCharsets.UTF_8);
          line.reset();
          return s;
        }
      }
      append(pos, end - pos);
      pos = end;
      int n = in.read(buf);
      if (n < 0) {
        if (line.size() == 0) {
          return null;
        }
        String s = line.toString(StandardCharsets.UTF_8);
        line.reset();
        return s;
      }
      pos = 0;
      end = n;
    }
  }

  private void append(int from, int len) throws IOException {
    if (line.size() + len > maxLine) {
      throw new IOException("a line of the stream is longer than " + maxLine + " bytes");
    }
    line.write(buf, from, len);
  }
}
