package io.sandboxes.local.internal.egress;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * The few DER encodings an X.509 certificate needs (ITU-T X.690), enough for the gateway's CA to
 * write its own certificate and its leaves with nothing but the JDK's public API.
 */
final class Der {
  private static final DateTimeFormatter UTC_TIME = DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'");

  private Der() {}

  static byte[] tlv(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
    out.write(tag);
    int n = content.length;
    if (n < 0x80) {
      out.write(n);
    } else {
      int bytes = n > 0xFFFFFF ? 4 : n > 0xFFFF ? 3 : n > 0xFF ? 2 : 1;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write((n >>> (8 * i)) & 0xFF);
      }
    }
    out.writeBytes(content);
    return out.toByteArray();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  static byte[] sequence(byte[]... parts) {
    return tlv(0x30, concat(parts));
  }

  static byte[] set(byte[]... parts) {
    return tlv(0x31, concat(parts));
  }

  static byte[] integer(BigInteger v) {
    return tlv(0x02, v.toByteArray());
  }

  static byte[] bool(boolean v) {
    return tlv(0x01, new byte[] {(byte) (v ? 0xFF : 0x00)});
  }

  static byte[] octets(byte[] v) {
    return tlv(0x04, v);
  }

  /** A BIT STRING of whole bytes, or of {@code unused} bits fewer. */
  static byte[] bits(int unused, byte[] v) {
    byte[] c = new byte[v.length + 1];
    c[0] = (byte) unused;
    System.arraycopy(v, 0, c, 1, v.length);
    return tlv(0x03, c);
  }

  static byte[] utf8(String s) {
    return tlv(0x0C, s.getBytes(StandardCharsets.UTF_8));
  }

  /** UTCTime, which RFC 5280 asks for up to 2049. */
  static byte[] time(ZonedDateTime t) {
    return tlv(0x17, UTC_TIME.format(t.withZoneSameInstant(ZoneOffset.UTC)).getBytes(StandardCharsets.US_ASCII));
  }

  /** Explicitly tagged, constructed, context-specific {@code [n]}. */
  static byte[] explicit(int n, byte[] content) {
    return tlv(0xA0 | n, content);
  }

  static byte[] oid(String dotted) {
    String[] p = dotted.split("\\.");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(Integer.parseInt(p[0]) * 40 + Integer.parseInt(p[1]));
    for (int i = 2; i < p.length; i++) {
      long v = Long.parseLong(p[i]);
      int groups = 1;
      while ((v >>> (7 * groups)) != 0) {
        groups++;
      }
      for (int g = groups - 1; g >= 0; g--) {
        out.write((int) ((v >>> (7 * g)) & 0x7F) | (g == 0 ? 0 : 0x80));
      }
    }
    return tlv(0x06, out.toByteArray());
  }
}
