package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxException;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.SandboxQuery;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.eclipse.jetty.http.HttpHeader;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 12's client items: what a wrong or hostile server made the client do. Every answer here
 * is scripted over real HTTP by a {@link FaultServer} that forwards nothing (its target is a
 * closed port), so no Docker is needed and nothing the real server does can hide a client bug.
 */
class HardeningClientCasesTest {

  static final String API_KEY = "e2b_hardening0123456789abcdef";

  /** A provider whose control plane and envd are both the scripted server. */
  static final class Scripted implements AutoCloseable {
    final FaultServer server;
    final E2BSandboxProvider provider;

    Scripted() throws Exception {
      this(Duration.ofSeconds(60));
    }

    Scripted(Duration requestTimeout) throws Exception {
      server = new FaultServer(URI.create("http://127.0.0.1:1"));
      provider = E2BSandboxProvider.builder().apiUrl(server.url()).sandboxUrl(server.url()).apiKey(API_KEY)
          .requestTimeout(requestTimeout).environment(java.util.Map.of()).build();
    }

    @Override
    public void close() throws Exception {
      provider.close();
      server.close();
    }
  }

  /** Answers a listing page: the rows, and {@code X-Next-Token} when {@code token} is not null. */
  static FaultServer.Fault page(String rows, IntFunction<String> token, AtomicInteger served) {
    return (req, resp, cb) -> {
      String next = token.apply(served.incrementAndGet());
      resp.setStatus(200);
      resp.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
      if (next != null) {
        resp.getHeaders().put("X-Next-Token", next);
      }
      resp.write(true, ByteBuffer.wrap(rows.getBytes(StandardCharsets.UTF_8)), cb);
      return true;
    };
  }

  /**
   * Runs a listing on its own thread and returns what it threw. A client that loops forever is
   * stopped by closing its provider once the bound has passed, and the test fails.
   */
  static Throwable listingOutcome(Scripted s, Runnable listing) throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread t = Thread.ofVirtual().start(() -> {
      try {
        listing.run();
      } catch (Throwable e) {
        thrown.set(e);
      }
    });
    t.join(Duration.ofSeconds(10));
    boolean ended = !t.isAlive();
    if (!ended) {
      s.provider.close();
      t.join(Duration.ofSeconds(10));
    }
    assertThat(ended).as("the listing ended by itself within 10 s").isTrue();
    return thrown.get();
  }

  // ---- item 6: a next-page token that never changes ----

  @Test
  @DisplayName("issue 12 item 6: listAll throws on a next-page token the server hands out twice, after reading only two pages")
  void listAllRepeatedToken() throws Exception {
    try (Scripted s = new Scripted()) {
      AtomicInteger served = new AtomicInteger();
      s.server.on(FaultServer.route("GET", "/v2/sandboxes"), page(ListingCasesTest.listing(List.of("rowa0000000000000000")),
          n -> "same-token", served));
      Throwable e = listingOutcome(s, () -> s.provider.api().listAll(SandboxQuery.all()));
      assertThat(e).isInstanceOf(SandboxException.class).hasMessageContaining("same-token").hasMessageContaining("second time");
      assertThat(served.get()).isEqualTo(2);
    }
  }

  @Test
  @DisplayName("issue 12 item 6: a token cycle (a, b, a) is a repeat too: provider.list throws after three pages")
  void providerListTokenCycle() throws Exception {
    try (Scripted s = new Scripted()) {
      AtomicInteger served = new AtomicInteger();
      s.server.on(FaultServer.route("GET", "/v2/sandboxes"), page("[]", n -> n % 2 == 1 ? "token-a" : "token-b", served));
      Throwable e = listingOutcome(s, () -> s.provider.list());
      assertThat(e).isInstanceOf(SandboxException.class).hasMessageContaining("token-a").hasMessageContaining("second time");
      assertThat(served.get()).isEqualTo(3);
    }
  }

  @Test
  @DisplayName("issue 12 item 6: listTemplates throws on a snapshot listing whose next-page token never changes")
  void listTemplatesRepeatedToken() throws Exception {
    try (Scripted s = new Scripted()) {
      AtomicInteger served = new AtomicInteger();
      s.server.on(FaultServer.route("GET", "/v2/sandboxes"), page("[]", n -> null, new AtomicInteger()));
      s.server.on(FaultServer.route("GET", "/snapshots"), page("[{\"snapshotID\":\"snap1\",\"names\":[\"t1\"]}]",
          n -> "stuck", served));
      Throwable e = listingOutcome(s, () -> s.provider.listTemplates(null));
      assertThat(e).isInstanceOf(SandboxException.class).hasMessageContaining("stuck").hasMessageContaining("list snapshots");
      assertThat(served.get()).isEqualTo(2);
    }
  }

  @Test
  @DisplayName("issue 12 item 6: listVolumes (which reads the sandbox listing for mounts) stops on a repeated token too")
  void listVolumesRepeatedToken() throws Exception {
    try (Scripted s = new Scripted()) {
      AtomicInteger served = new AtomicInteger();
      s.server.on(FaultServer.route("GET", "/volumes"), FaultServer.json(200, "[]"));
      s.server.on(FaultServer.route("GET", "/v2/sandboxes"), page("[]", n -> "again", served));
      Throwable e = listingOutcome(s, () -> s.provider.listVolumes(io.sandboxes.VolumeQuery.all()));
      assertThat(e).isInstanceOf(SandboxException.class).hasMessageContaining("again");
      assertThat(served.get()).isEqualTo(2);
    }
  }
}
