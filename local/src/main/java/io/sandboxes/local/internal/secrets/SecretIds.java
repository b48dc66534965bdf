package io.sandboxes.local.internal.secrets;

import java.security.SecureRandom;
import java.time.Instant;

/**
 * Secret ids as E2B spells them: {@code sec_} and 26 characters of Crockford's base32 (lower
 * case) holding a time-ordered 128-bit id (48 bits of milliseconds, then random bits), so ids
 * sort by creation.
 */
final class SecretIds {
  static final String PREFIX = "sec_";
  private static final char[] ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz".toCharArray();
  private static final SecureRandom RANDOM = new SecureRandom();

  private SecretIds() {}

  /** @return a new id, later than any made before it in this millisecond's past */
  static String next(Instant now) {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    long ms = now.toEpochMilli();
    for (int i = 0; i < 6; i++) {
      b[i] = (byte) (ms >>> (40 - 8 * i));
    }
    b[6] = (byte) ((b[6] & 0x0f) | 0x70); // version 7
    b[8] = (byte) ((b[8] & 0x3f) | 0x80); // variant
    return PREFIX + encode(b);
  }

  /** Whether {@code s} is spelled as an id: the prefix, then 26 of the alphabet, the first at most 7. */
  static boolean wellFormed(String s) {
    if (s.length() != PREFIX.length() + 26 || !s.startsWith(PREFIX) || s.charAt(PREFIX.length()) > '7') {
      return false;
    }
    for (int i = PREFIX.length(); i < s.length(); i++) {
      if (new String(ALPHABET).indexOf(s.charAt(i)) < 0) {
        return false;
      }
    }
    return true;
  }

  /** 128 bits as 26 base32 characters, two leading zero bits first. */
  private static String encode(byte[] b) {
    java.math.BigInteger n = new java.math.BigInteger(1, b);
    char[] out = new char[26];
    for (int i = 25; i >= 0; i--) {
      out[i] = ALPHABET[n.intValue() & 31];
      n = n.shiftRight(5);
    }
    return new String(out);
  }
}
