package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxAuthenticationException;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.local.contract.FaultServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several accounts in one JVM, each a provider configured by its own builder, against the real
 * local server through a recording proxy: each sends its own key and nothing else, and a key the
 * server refuses is {@link SandboxAuthenticationException}.
 */
@ExtendWith(SharedServer.class)
class AccountsTest {
  private static final String OTHER_KEY = "e2b_0000000000000000000000000000000000000000";

  @Test
  @DisplayName("issue 24 item 7: two accounts side by side: each request carries its own provider's key; the refused one is SandboxAuthenticationException (401), its key in no message")
  void twoAccounts(LocalServer server) throws Exception {
    try (FaultServer api = new FaultServer(server.apiUrl());
         E2BSandboxProvider team = E2BSandboxProvider.builder().environment(Map.of()).apiUrl(api.url())
             .sandboxUrl(server.sandboxUrl()).apiKey(server.apiKey()).build();
         E2BSandboxProvider other = E2BSandboxProvider.builder().environment(Map.of()).apiUrl(api.url())
             .sandboxUrl(server.sandboxUrl()).apiKey(OTHER_KEY).requestTimeout(Duration.ofSeconds(5)).retries(0).build()) {
      try (LiveSandbox sandbox = team.api().create()) {
        assertThat(team.api().list(SandboxQuery.all()).items()).extracting(i -> i.id()).contains(sandbox.id());
        int teamCalls = api.requests().size();
        assertThatThrownBy(() -> other.api().list(SandboxQuery.all()))
            .isInstanceOfSatisfying(SandboxAuthenticationException.class, e -> {
              assertThat(e.statusCode()).isEqualTo(401);
              assertThat(e.serverMessage()).isEqualTo("Invalid API key");
            })
            .hasMessageNotContaining(OTHER_KEY).hasMessageNotContaining(server.apiKey());
        assertThatThrownBy(() -> other.api().connect(sandbox.id())).isInstanceOf(SandboxAuthenticationException.class);
        // the first account's calls all carried its key, the second's all carried its own
        assertThat(api.requests().subList(0, teamCalls)).extracting(r -> r.headers().get("x-api-key")).containsOnly(server.apiKey());
        assertThat(api.requests().subList(teamCalls, api.requests().size())).hasSize(2)
            .extracting(r -> r.headers().get("x-api-key")).containsOnly(OTHER_KEY);
        // and the refusal left the first account working
        assertThat(sandbox.exec("echo still mine").stdout()).isEqualTo("still mine\n");
        assertThat(team.api().withRequestTimeout(Duration.ofSeconds(10)).info(sandbox.id()).id()).isEqualTo(sandbox.id());
        // one provider, a second account for some calls only (E2B's per-call apiKey): its key, and its refusal
        int before = api.requests().size();
        assertThatThrownBy(() -> team.api().with(io.sandboxes.e2b.CallOptions.defaults().withApiKey(OTHER_KEY).withRetries(0))
            .list(SandboxQuery.all())).isInstanceOf(SandboxAuthenticationException.class);
        assertThat(api.requests().subList(before, api.requests().size())).extracting(r -> r.headers().get("x-api-key"))
            .containsExactly(OTHER_KEY);
        assertThat(team.api().list(SandboxQuery.all()).items()).as("the provider's own key is untouched")
            .extracting(i -> i.id()).contains(sandbox.id());
      }
    }
  }
}
