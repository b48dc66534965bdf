package io.sandboxes.e2b.internal;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Decodes UTF-8 that arrives in arbitrary chunks: a character split across two chunks comes out
 * whole, once its last byte has arrived. Invalid sequences become U+FFFD. Not thread-safe.
 */
public final class Utf8Accumulator {
  private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPLACE)
      .onUnmappableCharacter(CodingErrorAction.REPLACE);
  private ByteBuffer pending = ByteBuffer.allocate(0);
  private final StringBuilder all = new StringBuilder();

  /** Decodes a chunk and returns the text it completes (possibly empty). */
  public String feed(byte[] chunk) {
    ByteBuffer in = ByteBuffer.allocate(pending.remaining() + chunk.length);
    in.put(pending).put(chunk).flip();
    CharBuffer out = CharBuffer.allocate((int) Math.ceil(in.remaining() * (double) decoder.maxCharsPerByte()) + 1);
    decoder.decode(in, out, false);
    pending = in.slice();
    out.flip();
    String text = out.toString();
    all.append(text);
    return text;
  }

  /** Ends the input: an incomplete trailing sequence becomes U+FFFD. Returns that text. */
  public String finish() {
    CharBuffer out = CharBuffer.allocate(pending.remaining() * 2 + 2);
    decoder.decode(pending, out, true);
    decoder.flush(out);
    pending = ByteBuffer.allocate(0);
    out.flip();
    String text = out.toString();
    all.append(text);
    return text;
  }

  /** Everything decoded so far. */
  public String text() {
    return all.toString();
  }
}
