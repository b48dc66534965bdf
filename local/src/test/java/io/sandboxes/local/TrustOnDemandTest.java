package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.internal.egress.TrustStore;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The egress gateway's CA goes into a sandbox's trust store only when the sandbox needs it (header
 * rules; the shared server has no extra CAs): a create without rules is not slowed by the write,
 * and a network update that brings rules writes it.
 */
@ExtendWith(SharedServer.class)
class TrustOnDemandTest {

  @Test
  @DisplayName("a sandbox on the network without header rules gets no gateway CA; an update that brings rules writes it")
  void caWrittenWhenRulesCome(E2BApi api) {
    try (LiveSandbox s = api.create(SandboxSpec.defaults().withNetwork(SandboxNetwork.allowOnly("rules.example.test")))) {
      assertThat(s.exec("test -e " + TrustStore.OWN_BUNDLE + "; echo $?").stdout()).as("no gateway CA without rules").isEqualTo("1\n");
      // and Node, told where extra certificates are, finds the file there and has nothing to warn about
      assertThat(s.exec("node -e 'console.log(1)' 2>&1").stdout()).isEqualTo("1\n");
      api.updateNetwork(s.id(), SandboxNetwork.allowOnly("rules.example.test").withRule("rules.example.test", Map.of("X-Team", "one")));
      String ours = s.exec("cat " + TrustStore.OWN_BUNDLE).stdout();
      assertThat(ours).as("the gateway's CA, once rules came").startsWith("-----BEGIN CERTIFICATE-----");
      assertThat(s.exec("cat " + TrustStore.SYSTEM_BUNDLE).stdout()).as("and in the system bundle").contains(ours.strip());
    }
  }
}
