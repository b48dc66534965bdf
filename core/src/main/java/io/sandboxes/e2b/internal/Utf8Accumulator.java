package io.sandboxes.e2b.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Decodes UTF-8 that arrives in arbitrary chunks: a character split across two chunks comes out
 * whole, once its last byte has arrived. Invalid sequences become U+FFFD. Not thread-safe.
 *
 * <p>Two uses, one per instance: {@link #feed} decodes each chunk for a listener as it comes;
 * {@link #add} only keeps the bytes, and {@link #text} decodes everything once, at the end (an
 * accumulator made to keep everything does both). Keeping is what an exec's result needs; a
 * long-lived spawn's streams only feed, so they hold nothing once a chunk is delivered.
 */
public final class Utf8Accumulator {
  private final boolean keep;
  private static final byte[] NOTHING = new byte[0];
  private byte[] pending = NOTHING;
  private final List<byte[]> chunks = new ArrayList<>();
  private long kept;
  private String text = "";
  private boolean textCurrent = true;

  /** An accumulator that keeps every byte, for {@link #text}. */
  public Utf8Accumulator() {
    this(true);
  }

  /** @param keep whether every byte is kept for {@link #text} (false: {@link #feed} only) */
  public Utf8Accumulator(boolean keep) {
    this.keep = keep;
  }

  /** Keeps a chunk for {@link #text} without decoding it now. */
  public void add(byte[] chunk) {
    if (!keep) {
      throw new IllegalStateException("this accumulator keeps nothing");
    }
    if (chunk.length > 0) {
      if (kept + chunk.length > Integer.MAX_VALUE - 16) {
        throw new IllegalStateException("more than 2 GiB of output cannot be held as one text");
      }
      chunks.add(chunk);
      kept += chunk.length;
      textCurrent = false;
    }
  }

  /** Decodes a chunk and returns the text it completes (possibly empty); keeps it too if this keeps. */
  public String feed(byte[] chunk) {
    if (keep) {
      add(chunk);
    }
    byte[] in = chunk;
    if (pending.length > 0) {
      in = new byte[pending.length + chunk.length];
      System.arraycopy(pending, 0, in, 0, pending.length);
      System.arraycopy(chunk, 0, in, pending.length, chunk.length);
    }
    int cut = completeUpTo(in);
    pending = cut == in.length ? NOTHING : Arrays.copyOfRange(in, cut, in.length);
    return new String(in, 0, cut, StandardCharsets.UTF_8);
  }

  /**
   * Where the last sequence that more bytes could still complete begins (the length when there is
   * none): what comes before decodes the same whatever follows.
   */
  private static int completeUpTo(byte[] b) {
    int n = b.length;
    for (int i = n - 1; i >= Math.max(0, n - 3); i--) {
      int x = b[i] & 0xff;
      if (x < 0x80) {
        return n;
      }
      if (x >= 0xC0) {
        int need = x >= 0xF0 ? 4 : x >= 0xE0 ? 3 : 2;
        return n - i >= need ? n : i;
      }
    }
    return n;
  }

  /** Ends what {@link #feed} decodes: an incomplete trailing sequence becomes U+FFFD. Returns that text. */
  public String finish() {
    String text = new String(pending, StandardCharsets.UTF_8);
    pending = NOTHING;
    return text;
  }

  /**
   * Everything kept so far, decoded as one text (an incomplete trailing sequence is U+FFFD, as
   * {@link #finish} makes it).
   */
  public String text() {
    if (!keep) {
      throw new IllegalStateException("this accumulator keeps nothing");
    }
    if (!textCurrent) {
      byte[] all = chunks.size() == 1 ? chunks.get(0) : new byte[(int) kept];
      if (chunks.size() > 1) {
        int at = 0;
        for (byte[] c : chunks) {
          System.arraycopy(c, 0, all, at, c.length);
          at += c.length;
        }
        chunks.clear();
        chunks.add(all);
      }
      text = new String(all, StandardCharsets.UTF_8);
      textCurrent = true;
    }
    return text;
  }
}
