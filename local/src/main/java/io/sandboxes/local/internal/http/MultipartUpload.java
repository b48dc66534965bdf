package io.sandboxes.local.internal.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.io.Content;
import org.jspecify.annotations.Nullable;

/**
 * A {@code multipart/form-data} body read as a stream: each part's content is handed to a writer
 * while the body is still arriving, through a small bounded queue, so an upload of any size holds
 * a few hundred KiB of the server's memory and nothing on its disk. Jetty's push parser finds the
 * parts and their names; the writer of each part (which pulls from an {@link InputStream}) runs on
 * its own virtual thread, one part at a time, in body order.
 */
final class MultipartUpload {
  /** How much of the body is read at once. */
  static final int READ_SIZE = 64 * 1024;
  /** Chunks in flight between the body and a part's writer: with {@link #READ_SIZE}, at most 512 KiB. */
  static final int QUEUE_CHUNKS = 8;
  /** The most a part's headers may hold. */
  static final int MAX_PART_HEADERS = 16 * 1024;
  /** The most parts one body may hold. */
  static final int MAX_PARTS = 1000;
  /**
   * The most of a body read and dropped after a part failed, so that the client, which may still
   * be sending the later parts, reads the answer instead of a broken connection; a longer rest is
   * left unread and the answer closes the connection.
   */
  static final int DRAINED_AFTER_FAILURE = 1024 * 1024;

  /** What is done with a part: where it goes (or why it cannot go anywhere), and its writing. */
  interface PartWriter {
    /**
     * Decides a part's target before any of its content is read.
     *
     * @return the part's target, or null to refuse the part (and the rest of the body) with
     *     {@link #refusal(String, String)}'s message
     */
    @Nullable String target(@Nullable String name, @Nullable String fileName);

    /** @return why a part with this file name cannot be written, for a 400 */
    String refusal(@Nullable String name, @Nullable String fileName);

    /** Writes one part's content, read to its end; an {@link IOException} from it means the body broke. */
    void write(String target, InputStream content) throws Exception;
  }

  /** A body that is not valid multipart, or a part refused: for a 400. */
  static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String message) {
      super(message);
    }
  }

  private MultipartUpload() {}

  /**
   * Reads the whole body, writing each part as it arrives. When a part fails, the rest of the
   * body (up to {@link #DRAINED_AFTER_FAILURE}) is read and dropped before the failure is thrown.
   *
   * @return how many parts were written
   * @throws Malformed for a body that is not multipart or a refused part; parts before it are written
   * @throws IOException when the body broke off (the part being written is abandoned, not cut short)
   * @throws Exception whatever a part's writer threw
   */
  static int read(InputStream body, String boundary, PartWriter writer) throws Exception {
    Listener listener = new Listener(writer);
    MultiPart.Parser parser = new MultiPart.Parser(boundary, listener);
    parser.setPartHeadersMaxLength(MAX_PART_HEADERS);
    parser.setMaxParts(MAX_PARTS);
    try {
      while (listener.failure == null && !listener.complete) {
        byte[] buf = new byte[READ_SIZE]; // fresh each time: the parser may keep a slice of the last one
        int n;
        try {
          n = body.read(buf);
        } catch (IOException e) {
          listener.abandon(e);
          throw e;
        }
        if (n < 0) {
          parser.parse(Content.Chunk.EOF);
          break;
        }
        parser.parse(Content.Chunk.from(ByteBuffer.wrap(buf, 0, n), false));
      }
    } finally {
      listener.abandon(new IOException("the upload ended early"));
    }
    if (listener.failure != null) {
      drain(body);
      throw listener.failure;
    }
    if (!listener.complete) {
      throw new Malformed("the multipart body ended before its closing boundary");
    }
    return listener.written;
  }

  /** Reads and drops what is left of a body, up to {@link #DRAINED_AFTER_FAILURE} bytes. */
  private static void drain(InputStream body) {
    byte[] sink = new byte[READ_SIZE];
    long dropped = 0;
    try {
      int n;
      while (dropped < DRAINED_AFTER_FAILURE && (n = body.read(sink)) >= 0) {
        dropped += n;
      }
    } catch (IOException e) {
      // the body broke off: the answer goes out as far as it can
    }
  }

  /** The parser's listener: starts a writer per part and feeds it. Never throws into the parser. */
  private static final class Listener extends MultiPart.AbstractPartsListener {
    private final PartWriter writer;
    @Nullable Exception failure;
    boolean complete;
    int written;
    private @Nullable Pipe pipe;
    private @Nullable Thread thread;
    private @Nullable Exception writeFailure;

    Listener(PartWriter writer) {
      this.writer = writer;
    }

    @Override
    public void onPartHeaders() {
      if (failure != null) {
        return;
      }
      String target = writer.target(getName(), getFileName());
      if (target == null) {
        failure = new Malformed(writer.refusal(getName(), getFileName()));
        return;
      }
      Pipe p = new Pipe();
      pipe = p;
      writeFailure = null;
      thread = Thread.ofVirtual().name("sandboxes-upload").start(() -> {
        try {
          writer.write(target, p);
        } catch (Exception e) {
          writeFailure = e;
        } finally {
          p.closeReader();
        }
      });
    }

    @Override
    public void onPartContent(Content.Chunk chunk) {
      Pipe p = pipe; // the chunk is a slice of the parser's input: copied, never kept or released
      if (p != null && failure == null && chunk.hasRemaining()) {
        ByteBuffer b = chunk.getByteBuffer().slice();
        byte[] copy = new byte[b.remaining()];
        b.get(copy);
        p.put(copy);
      }
    }

    @Override
    public void onPartEnd() {
      Pipe p = pipe;
      if (p != null) {
        p.end(null);
        join();
        if (writeFailure != null && failure == null) {
          failure = writeFailure;
        } else if (failure == null) {
          written++;
        }
      }
      pipe = null;
      super.onPartEnd();
    }

    @Override
    public void onPart(String name, String fileName, HttpFields headers) {
      // each part was written as it arrived
    }

    @Override
    public void onComplete() {
      complete = true;
    }

    @Override
    public void onFailure(Throwable cause) {
      if (failure == null) {
        failure = new Malformed("unreadable multipart body: " + cause.getMessage());
      }
      abandon(new IOException("unreadable multipart body"));
    }

    /** Ends the part being written with an error, so its write is abandoned, and waits for it. */
    void abandon(IOException cause) {
      Pipe p = pipe;
      if (p != null) {
        pipe = null;
        p.end(cause);
        join();
      }
    }

    private void join() {
      Thread t = thread;
      if (t == null) {
        return;
      }
      boolean interrupted = false;
      while (true) {
        try {
          t.join();
          break;
        } catch (InterruptedException e) {
          interrupted = true; // the writer must finish (it cancels its write) before the body moves on
        }
      }
      thread = null;
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * A bounded hand-over of one part's bytes from the body's reader to the part's writer. The
   * reader side blocks while {@link #QUEUE_CHUNKS} chunks wait; once the writer stops reading
   * (done or failed) everything put is dropped.
   */
  private static final class Pipe extends InputStream {
    private static final byte[] END = new byte[0];
    private final BlockingQueue<byte[]> queue = new ArrayBlockingQueue<>(QUEUE_CHUNKS);
    private volatile boolean readerGone;
    private volatile @Nullable IOException broken;
    private byte @Nullable [] current;
    private int pos;
    private boolean ended;

    void put(byte[] chunk) {
      try {
        while (!readerGone && !queue.offer(chunk, 100, TimeUnit.MILLISECONDS)) {
          // the writer is behind (the daemon gives credit as its disk takes the bytes)
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        end(new InterruptedIOException("interrupted while handing an upload on"));
      }
    }

    /** The part's end: normal with null, else the writer's next read throws {@code cause}. */
    void end(@Nullable IOException cause) {
      broken = cause;
      if (cause != null) {
        queue.clear(); // makes room; the writer sees the failure rather than the bytes before it
      }
      try {
        while (!readerGone && !queue.offer(END, 100, TimeUnit.MILLISECONDS)) {
          // waits for the writer to take what is queued
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        broken = new InterruptedIOException("interrupted while ending an upload");
        queue.clear();
        queue.offer(END);
      }
    }

    void closeReader() {
      readerGone = true;
      queue.clear();
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      while (current == null || pos == current.length) {
        if (ended) {
          return fail();
        }
        byte[] next;
        try {
          next = queue.take();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while reading an upload");
        }
        if (next == END) {
          ended = true;
          return fail();
        }
        current = next;
        pos = 0;
      }
      int n = Math.min(len, current.length - pos);
      System.arraycopy(current, pos, b, off, n);
      pos += n;
      return n;
    }

    private int fail() throws IOException {
      IOException e = broken;
      if (e != null) {
        throw e;
      }
      return -1;
    }
  }
}
