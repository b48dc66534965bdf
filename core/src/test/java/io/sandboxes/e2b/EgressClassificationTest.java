package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.EgressProbe;
import io.sandboxes.EgressVerdict;
import io.sandboxes.EgressVerdict.State;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class EgressClassificationTest {
  private static final EgressProbe P = EgressProbe.E2B_CLOUD;

  private static EgressVerdict v(String allowed, String host, String ip) {
    return EgressProbeRun.classify(P, allowed, host, ip);
  }

  @Test
  @DisplayName("case 128: allowed answered and both denied blocked is filtered, with the seed's detail and no remediation")
  void filtered() {
    assertThat(v("200", "000", "000")).isEqualTo(new EgressVerdict(State.FILTERED,
        "deny-by-default verified: registry.npmjs.org=200 reachable; example.com=000 and raw IP=000 blocked.", null));
  }

  @Test
  @DisplayName("case 129: any denied probe answering is open, with detail and remediation")
  void open() {
    for (EgressVerdict verdict : new EgressVerdict[] {v("200", "200", "000"), v("200", "000", "301")}) {
      assertThat(verdict.state()).isEqualTo(State.OPEN);
      assertThat(verdict.detail()).startsWith("Non-allow-listed egress was reachable (host=");
      assertThat(verdict.remediation())
          .isEqualTo("Ensure updateNetwork applies allowOut + denyOut:[0.0.0.0/0]; check the E2B account supports network policy.");
    }
    assertThat(v("200", "000", "301").detail()).isEqualTo("Non-allow-listed egress was reachable (host=000, rawIP=301, allowed=200).");
  }

  @Test
  @DisplayName("case 130: open takes precedence over a dead control host")
  void openFirst() {
    assertThat(v("000", "200", "000").state()).isEqualTo(State.OPEN);
  }

  @Test
  @DisplayName("case 131: no network is inconclusive, never open or filtered")
  void noNetwork() {
    EgressVerdict verdict = v("000", "000000", "000000");
    assertThat(verdict.state()).isEqualTo(State.INCONCLUSIVE);
    assertThat(verdict.detail()).contains("probe sandbox had no network (allowed=000");
    assertThat(verdict.remediation()).isEqualTo(
        "The allow-listed control host did not answer, so the probe observed nothing. Check the sandbox template / E2B networking.");
    assertThat(v("", "", "").state()).isEqualTo(State.INCONCLUSIVE);
  }

  @Test
  @DisplayName("case 132: answered is three digits starting 1-5; blocked is empty or any run of zeros")
  void codes() {
    assertThat(v("200", "000000", "0000").state()).isEqualTo(State.FILTERED);
    assertThat(v("200", "", "0").state()).isEqualTo(State.FILTERED);
    assertThat(v("599", "000", "000").state()).isEqualTo(State.FILTERED);
    assertThat(v("600", "000", "000").state()).isEqualTo(State.INCONCLUSIVE);
  }

  @Test
  @DisplayName("case 133: output that is neither answered nor blocked is inconclusive and says so")
  void unreadable() {
    for (String odd : new String[] {"abc", "999"}) {
      EgressVerdict verdict = v("200", odd, "000");
      assertThat(verdict.state()).isEqualTo(State.INCONCLUSIVE);
      assertThat(verdict.detail()).startsWith("Egress probe output was unreadable (");
      assertThat(verdict.remediation()).isNull();
    }
  }

  @Test
  @DisplayName("case 135: the curl probe has no '|| echo 000' fallback")
  void probeCommand() {
    assertThat(EgressProbeRun.curl(P, "example.com")).isEqualTo("curl -s -o /dev/null -m 8 -w '%{http_code}' https://example.com/")
        .doesNotContain("|| echo 000");
  }
}
