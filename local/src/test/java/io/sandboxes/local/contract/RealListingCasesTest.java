package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A real account-wide listing makes a handle for every running sandbox of the server, and other
 * tests' sandboxes come and go meanwhile: so this runs alone.
 */
@Isolated
@ExtendWith(SharedServer.class)
class RealListingCasesTest {

  @Test
  @DisplayName("case 29, case 42, issue 24 item 6: paused sandboxes are skipped and never connected; the listing is account-wide (no user filter exists to send) and the only request")
  void skipsPaused(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String tag = "list-" + System.nanoTime();
      Sandbox running = h.provider.create(SandboxConfig.forProject(tag));
      Sandbox paused = h.provider.create(SandboxConfig.forProject(tag));
      try {
        paused.hibernate();
        h.api.clearRequests();
        List<String> listed = h.provider.list().stream().map(Sandbox::id).toList();
        assertThat(listed).contains(running.id()).doesNotContain(paused.id());
        assertThat(h.api.requests("POST", "/sandboxes/" + paused.id())).isEmpty();
        assertThat(h.api.requests("POST", "/v2/sandboxes/" + paused.id())).isEmpty();
        // the handles come from the listing alone: one request a page (one page here), no record
        // read and no connect (which moves deadlines) for any sandbox
        assertThat(h.api.requests()).extracting(FaultServer.Recorded::path).containsOnly("/v2/sandboxes");
        assertThat(h.api.requests("POST", "/v2/sandboxes/" + running.id() + "/connect")).isEmpty();
        String query = h.api.requests("GET", "/v2/sandboxes").get(0).query();
        assertThat(h.provider.describe(paused.id()).orElseThrow().state()).isEqualTo(io.sandboxes.SandboxState.PAUSED);
        assertThat(query == null ? "" : query).doesNotContainIgnoringCase("user");
      } finally {
        running.close();
        paused.close();
      }
    }
  }

  @Test
  @DisplayName("issue 13 item 9: a listing leaves every deadline where it was, and its handles work")
  void listingKeepsDeadlines(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      Sandbox shortLived = h.provider.create(SandboxConfig.forProject("list-deadline-" + System.nanoTime())
          .withTimeout(Duration.ofSeconds(60)));
      try {
        Instant before = h.provider.describe(shortLived.id()).orElseThrow().endAt();
        assertThat(before).isBefore(Instant.now().plusSeconds(61));
        Sandbox listed = h.provider.list().stream().filter(s -> s.id().equals(shortLived.id())).findFirst().orElseThrow();
        assertThat(listed.exec("echo listed").stdout()).isEqualTo("listed\n");
        assertThat(h.provider.describe(shortLived.id()).orElseThrow().endAt()).as("deadline after the listing").isEqualTo(before);
      } finally {
        shortLived.close();
      }
    }
  }

}
