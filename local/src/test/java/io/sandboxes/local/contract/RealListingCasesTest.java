package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A real account-wide listing connects to every running sandbox of the server, resuming any that
 * another test pauses meanwhile: so this runs alone.
 */
@Isolated
@ExtendWith(SharedServer.class)
class RealListingCasesTest {

  @Test
  @DisplayName("case 29, case 42: paused sandboxes are skipped and never connected; the listing is account-wide (no user filter exists to send)")
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
        assertThat(h.api.requests("POST", "/sandboxes/" + running.id() + "/connect")).hasSize(1);
        assertThat(h.provider.describe(paused.id()).orElseThrow().state()).isEqualTo(io.sandboxes.SandboxState.PAUSED);
        String query = h.api.requests("GET", "/v2/sandboxes").get(0).query();
        assertThat(query == null ? "" : query).doesNotContainIgnoringCase("user");
      } finally {
        running.close();
        paused.close();
      }
    }
  }

}
