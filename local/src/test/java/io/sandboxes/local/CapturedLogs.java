package io.sandboxes.local;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Everything written to the JVM's standard output and error while open (where the SDK's and the
 * in-process local server's logs go: slf4j-simple writes to {@code System.err} as it logs), still
 * passed through to the console. Other tests running meanwhile are captured too, which only
 * widens what is checked.
 */
public final class CapturedLogs implements AutoCloseable {
  private final PrintStream originalOut = System.out;
  private final PrintStream originalErr = System.err;
  private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

  /** Starts capturing. */
  public CapturedLogs() {
    System.setOut(new PrintStream(tee(originalOut), true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(tee(originalErr), true, StandardCharsets.UTF_8));
  }

  private OutputStream tee(PrintStream console) {
    return new OutputStream() {
      @Override
      public void write(int b) {
        console.write(b);
        synchronized (buffer) {
          buffer.write(b);
        }
      }

      @Override
      public void write(byte[] b, int off, int len) {
        console.write(b, off, len);
        synchronized (buffer) {
          buffer.write(b, off, len);
        }
      }

      @Override
      public void flush() {
        console.flush();
      }
    };
  }

  /** @return what was written so far */
  public String text() {
    synchronized (buffer) {
      return buffer.toString(StandardCharsets.UTF_8);
    }
  }

  @Override
  public void close() {
    System.out.flush();
    System.err.flush();
    System.setOut(originalOut);
    System.setErr(originalErr);
  }
}
