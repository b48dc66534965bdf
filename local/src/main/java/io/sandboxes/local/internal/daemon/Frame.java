package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;

/**
 * One frame from a daemon, read with every bound checked before anything is allocated: a length
 * over {@link Wire#MAX_PAYLOAD}, a reserved byte that is not zero, or a type a daemon does not
 * send is a {@link ProtocolException}, and nothing of the payload is read.
 */
record Frame(int type, int flags, int stream, byte[] payload) {

  /** @return the next frame, or null at a clean end of stream (between frames) */
  static @Nullable Frame read(InputStream in) throws IOException {
    byte[] h = in.readNBytes(Wire.HEADER);
    if (h.length == 0) {
      return null;
    }
    if (h.length < Wire.HEADER) {
      throw new ProtocolException("the connection ended inside a frame header");
    }
    long len = ((h[0] & 0xffL) << 24) | ((h[1] & 0xffL) << 16) | ((h[2] & 0xffL) << 8) | (h[3] & 0xffL);
    int stream = ((h[4] & 0xff) << 24) | ((h[5] & 0xff) << 16) | ((h[6] & 0xff) << 8) | (h[7] & 0xff);
    int type = h[8] & 0xff;
    int flags = h[9] & 0xff;
    if (len > Wire.MAX_PAYLOAD) {
      throw new ProtocolException("a frame of " + len + " bytes, over the limit of " + Wire.MAX_PAYLOAD);
    }
    if (h[10] != 0 || h[11] != 0) {
      throw new ProtocolException("a frame header with its reserved bytes set");
    }
    if (!Wire.isDaemonType(type)) {
      throw new ProtocolException("a frame of unknown type 0x" + Integer.toHexString(type));
    }
    // the length is bounded above, so the payload is read straight into an array of its size
    byte[] payload = new byte[(int) len];
    if (in.readNBytes(payload, 0, payload.length) < len) {
      throw new ProtocolException("the connection ended inside a frame");
    }
    return new Frame(type, flags, stream, payload);
  }
}
