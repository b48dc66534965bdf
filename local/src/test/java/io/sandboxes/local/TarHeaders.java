package io.sandboxes.local;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Tar headers made by hand, for crafted archives: commons-compress's writer takes time quadratic
 * in a name's length, so a test that needs a name of megabytes writes its PAX record itself.
 */
public final class TarHeaders {
  private TarHeaders() {}

  /** A ustar header: the name's first 100 bytes, mode 0644, owner 0, the size, the type. */
  public static byte[] header(String name, char type, long size) {
    byte[] h = new byte[512];
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    System.arraycopy(n, 0, h, 0, Math.min(100, n.length));
    put(h, 100, "0000644");
    put(h, 108, "0000000");
    put(h, 116, "0000000");
    put(h, 124, String.format("%011o", size));
    put(h, 136, String.format("%011o", 0));
    h[156] = (byte) type;
    put(h, 257, "ustar");
    put(h, 263, "00");
    Arrays.fill(h, 148, 156, (byte) ' ');
    long sum = 0;
    for (byte b : h) {
      sum += b & 0xff;
    }
    put(h, 148, String.format("%06o", sum));
    h[154] = 0;
    return h;
  }

  private static void put(byte[] h, int off, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, h, off, b.length);
  }
}
