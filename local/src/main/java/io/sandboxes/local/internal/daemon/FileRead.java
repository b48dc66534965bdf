package io.sandboxes.local.internal.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;

/**
 * A file being read from a sandbox, in chunks the daemon sends as this stream is read (at most
 * {@link Wire#WINDOW} bytes ahead). Closing it early stops the daemon.
 */
public final class FileRead extends InputStream implements FrameChannel.Sink {
  private final FrameChannel conn;
  private final Flow<byte[]> chunks;
  final CompletableFuture<EntryInfo> entry = new CompletableFuture<>();
  private byte[] current = new byte[0];
  private int pos;
  private boolean eof;
  int stream;

  /** Gives this stream and its flow their id on the connection. */
  void bind(int id) {
    this.stream = id;
    chunks.stream = id;
  }

  FileRead(FrameChannel conn) {
    this.conn = conn;
    this.chunks = new Flow<>(conn);
  }

  /** The request is sent: the stream's window may grow. */
  void opened() {
    chunks.open();
  }

  /** The file as opened, before the first byte. */
  public EntryInfo entry() {
    return entry.join();
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (len == 0) {
      return 0;
    }
    while (pos == current.length) {
      if (eof) {
        return -1;
      }
      byte[] next = chunks.nextWithin(DaemonConnection.CHUNK_WAIT, "reading a file");
      if (next == null) {
        eof = true;
        return -1;
      }
      current = next;
      pos = 0;
    }
    int n = Math.min(len, current.length - pos);
    System.arraycopy(current, pos, b, off, n);
    pos += n;
    return n;
  }

  @Override
  public void close() {
    if (!chunks.ended()) {
      conn.cancel(stream);
    }
    chunks.close();
    eof = true;
  }

  @Override
  public void frame(Frame f) throws ProtocolException {
    switch (f.type()) {
      case Wire.ENTRY -> {
        if (entry.isDone()) {
          throw new ProtocolException("a second entry on a read");
        }
        entry.complete(EntryInfo.whole(f.payload()));
      }
      case Wire.FILE_CHUNK -> {
        if (!entry.isDone()) {
          throw new ProtocolException("data before the entry");
        }
        chunks.deliver(f.payload(), f.payload().length);
      }
      case Wire.OK -> {
        conn.forget(stream);
        chunks.end();
      }
      case Wire.ERROR -> {
        DaemonException e = FrameChannel.error(f);
        conn.forget(stream);
        if (!entry.completeExceptionally(e)) {
          chunks.fail(e);
        }
      }
      default -> throw new ProtocolException("frame type 0x" + Integer.toHexString(f.type()) + " on a read");
    }
  }

  @Override
  public void closed(DaemonException e) {
    entry.completeExceptionally(e);
    chunks.fail(e);
  }
}
