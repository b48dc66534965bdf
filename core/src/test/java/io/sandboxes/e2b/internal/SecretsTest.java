package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.SandboxException;
import java.io.IOException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SecretsTest {

  @Test
  @DisplayName("issue 12 item 9: a held secret is redacted from messages and from a cause chain, which keeps its class names and trace")
  void redactsMessagesAndCauses() {
    Object holder = new Object();
    Secrets.hold(holder, "s3cr3t-value-of-the-test");
    IOException io = new IOException("echoed s3cr3t-value-of-the-test", new IllegalStateException("plain"));
    SandboxException e = new SandboxException("failed: s3cr3t-value-of-the-test", io);
    assertThat(e).hasMessage("failed: [redacted]");
    assertThat(e.getCause()).isInstanceOf(Secrets.Redacted.class).hasMessage("echoed [redacted]");
    assertThat(e.getCause().toString()).startsWith("java.io.IOException (redacted)");
    assertThat(e.getCause().getStackTrace()).isEqualTo(io.getStackTrace());
    assertThat(e.getCause().getCause()).hasMessage("plain");
    java.lang.ref.Reference.reachabilityFence(holder);
  }

  @Test
  @DisplayName("issue 12 item 9: a cause that shows no secret is kept as it is; values under 8 characters are no secrets")
  void leavesTheRestAlone() {
    Object holder = new Object();
    Secrets.hold(holder, "t");
    IOException io = new IOException("connection reset");
    SandboxException e = new SandboxException("interrupted while listing", io);
    assertThat(e.getCause()).isSameAs(io);
    assertThat(e).hasMessage("interrupted while listing");
    java.lang.ref.Reference.reachabilityFence(holder);
  }
}
