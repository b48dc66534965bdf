package io.sandboxes.dsl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Sandboxes.auto()'s line goes to SLF4J (the application's backend), never to java.util.logging's console. */
class AutoLogLineTest {

  @Test
  @DisplayName("auto() says which provider it chose through SLF4J; java.util.logging gets no record at all")
  void autoLogsThroughSlf4j() {
    List<LogRecord> jul = new CopyOnWriteArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        jul.add(r);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger root = Logger.getLogger("");
    root.addHandler(capture);
    PrintStream err = System.err;
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    System.setErr(new PrintStream(new java.io.OutputStream() {
      @Override
      public void write(int b) {
        seen.write(b);
        err.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        seen.write(b, off, len);
        err.write(b, off, len);
      }
    }, true, StandardCharsets.UTF_8));
    try (SandboxClient sandboxes = Sandboxes.autoWith(name -> null)) {
      assertThat(sandboxes.provider()).isNotNull();
    } finally {
      System.setErr(err);
      root.removeHandler(capture);
    }
    assertThat(jul).as("java.util.logging records").extracting(LogRecord::getMessage)
        .noneMatch(m -> m != null && m.contains("Sandboxes"));
    assertThat(jul).as("JUL records from the SDK").noneMatch(r -> String.valueOf(r.getLoggerName()).startsWith("io.sandboxes"));
    assertThat(seen.toString(StandardCharsets.UTF_8)).contains("INFO io.sandboxes.dsl.Sandboxes - Sandboxes: using the local runtime (no E2B_API_KEY)");
  }
}
