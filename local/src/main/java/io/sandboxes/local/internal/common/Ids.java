package io.sandboxes.local.internal.common;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Random names the server hands out: sandbox and template ids, access tokens. */
public final class Ids {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

  private Ids() {}

  /** @return 20 random lower-case letters and digits, as E2B's sandbox ids look */
  public static String newSandboxId() {
    char[] id = new char[20];
    for (int i = 0; i < id.length; i++) {
      id[i] = ID_ALPHABET[RANDOM.nextInt(ID_ALPHABET.length)];
    }
    return new String(id);
  }

  /** @return 24 random bytes in hex, for an access token */
  public static String newToken() {
    byte[] b = new byte[24];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
