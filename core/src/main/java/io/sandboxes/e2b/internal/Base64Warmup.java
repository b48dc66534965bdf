package io.sandboxes.e2b.internal;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Gets the JDK's base64 codec compiled with its vector stubs before process output needs it.
 *
 * <p>Output crosses envd's protocol as base64 in chunks of up to 64 KiB, so even 50 MB is only
 * about 800 calls of {@code Base64.Encoder.encode0} (on the server) and {@code
 * Base64.Decoder.decode0} (in the client): too few for HotSpot to compile them at its top tier,
 * the only one that replaces their inner loops with the vector stubs. Measured on this project's
 * benchmark machine, both stayed at tier 3 through 700 MB of output, each spending 50 to 100 ms
 * of CPU per 50 MB in the scalar loop; compiled at the top tier they spend 5 to 15 ms. A few
 * thousand calls on short arrays, once per JVM on a background virtual thread, cross the
 * threshold; the codec's results are the same either way.
 */
public final class Base64Warmup {
  /** Calls of each direction the warm-up makes: past HotSpot's top-tier invocation threshold. */
  static final int CALLS = 12_000;

  private static final AtomicBoolean STARTED = new AtomicBoolean();
  /** The warm-up's thread once started, for a test to wait for. */
  static volatile @Nullable Thread thread;

  private Base64Warmup() {}

  /** Starts the warm-up on a virtual thread, the first time it is asked for in this JVM. */
  public static void start() {
    if (STARTED.compareAndSet(false, true)) {
      thread = Thread.ofVirtual().name("sandboxes-base64-warmup").start(Base64Warmup::run);
    }
  }

  /**
   * Encodes and decodes {@link #CALLS} short arrays (of each length modulo 3, so every branch of
   * the codec is taken) through the {@code ByteBuffer} forms the protocol code uses.
   *
   * @return the number of bytes that came back, for a caller to check
   */
  static long run() {
    byte[][] inputs = {new byte[192], new byte[193], new byte[194]};
    for (int i = 0; i < inputs.length; i++) {
      inputs[i][i] = (byte) (0x80 + i);
    }
    long back = 0;
    for (int i = 0; i < CALLS; i++) {
      ByteBuffer encoded = Base64.getEncoder().encode(ByteBuffer.wrap(inputs[i % inputs.length]));
      back += Base64.getDecoder().decode(encoded).remaining();
    }
    return back;
  }
}
