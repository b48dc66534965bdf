package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.EgressProbe;
import io.sandboxes.EgressVerdict;
import io.sandboxes.ExecOptions;
import io.sandboxes.SandboxConfig;
import io.sandboxes.OnTimeout;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** The seed's egress probe: create a throwaway sandbox, curl three targets from inside, classify, destroy. */
final class EgressProbeRun {
  private static final Pattern ANSWERED = Pattern.compile("^[1-5]\\d\\d$");
  private static final Pattern BLOCKED = Pattern.compile("^0*$");
  /** The probe sandbox lives this long at most, then is killed (never paused). */
  static final Duration PROBE_SANDBOX_TIMEOUT = Duration.ofMinutes(5);

  private EgressProbeRun() {}

  /**
   * The probe's curl. Over plain HTTP it tunnels through the sandbox's proxy (when it has one):
   * a gateway that refuses a destination with an answer of its own (the local runtime's 403) then
   * leaves the status 000, as a refused HTTPS tunnel does, never a code read as "answered".
   */
  static String curl(EgressProbe probe, String host) {
    return "curl -s -o /dev/null -m 8 -w '%{http_code}' " + (probe.scheme().equals("http") ? "-p " : "") + probe.scheme() + "://"
        + host + "/";
  }

  static EgressVerdict classify(EgressProbe probe, String allowed, String deniedHost, String deniedIp) {
    boolean hostAnswered = ANSWERED.matcher(deniedHost).matches();
    boolean ipAnswered = ANSWERED.matcher(deniedIp).matches();
    if (hostAnswered || ipAnswered) {
      return new EgressVerdict(EgressVerdict.State.OPEN,
          "Non-allow-listed egress was reachable (host=" + deniedHost + ", rawIP=" + deniedIp + ", allowed=" + allowed + ").",
          "Ensure updateNetwork applies allowOut + denyOut:[0.0.0.0/0]; check the E2B account supports network policy.");
    }
    if (!ANSWERED.matcher(allowed).matches()) {
      return new EgressVerdict(EgressVerdict.State.INCONCLUSIVE,
          "Egress probe inconclusive: probe sandbox had no network (allowed=" + allowed + ", host=" + deniedHost + ", rawIP=" + deniedIp + ").",
          "The allow-listed control host did not answer, so the probe observed nothing. Check the sandbox template / E2B networking.");
    }
    if (BLOCKED.matcher(deniedHost).matches() && BLOCKED.matcher(deniedIp).matches()) {
      return new EgressVerdict(EgressVerdict.State.FILTERED,
          "deny-by-default verified: " + probe.allowedHost() + "=" + allowed + " reachable; " + probe.deniedHost() + "=" + deniedHost
              + " and raw IP=" + deniedIp + " blocked.",
          null);
    }
    return new EgressVerdict(EgressVerdict.State.INCONCLUSIVE,
        "Egress probe output was unreadable (allowed=" + allowed + ", host=" + deniedHost + ", rawIP=" + deniedIp + ").", null);
  }

  /**
   * The configured probe, else the default one, run against a sandbox made for it; a closed
   * provider, or a probe that cannot be had, is an inconclusive verdict saying why.
   */
  static EgressVerdict verify(E2BSandboxProvider provider, boolean closed, ControlPlane controlPlane) {
    if (closed) {
      return new EgressVerdict(EgressVerdict.State.INCONCLUSIVE,
          "Could not create a probe sandbox: this E2BSandboxProvider is closed", "Check E2B_API_KEY and account capacity.");
    }
    URI apiUrl = provider.settings.apiUrl();
    EgressProbe probe = provider.settings.egressProbe();
    if (probe == null) {
      try {
        probe = defaultProbe(apiUrl, controlPlane);
      } catch (RuntimeException e) {
        return new EgressVerdict(EgressVerdict.State.INCONCLUSIVE,
            "Could not learn what to probe: " + e.getMessage(), "Configure E2BSandboxProvider.Builder.egressProbe.");
      }
      if (probe == null) {
        return new EgressVerdict(EgressVerdict.State.INCONCLUSIVE,
            "The server at " + apiUrl + " is on this machine and names no witnesses to probe; public hosts are not probed from here.",
            "Configure E2BSandboxProvider.Builder.egressProbe with targets this server can observe.");
      }
    }
    return run(provider, probe);
  }

  /**
   * E2B's public probe for a remote control plane; for one on this machine (loopback), the
   * witnesses it names at {@code GET /local/egress-probe}, or null: a local server is never made
   * to probe public hosts.
   */
  static @Nullable EgressProbe defaultProbe(URI apiUrl, ControlPlane controlPlane) {
    String host = apiUrl.getHost();
    boolean loopback = host.equals("localhost") || host.startsWith("127.") || host.equals("[::1]") || host.equals("::1");
    if (!loopback) {
      return EgressProbe.E2B_CLOUD;
    }
    JsonNode p = controlPlane.getOptional("/local/egress-probe", "read the server's egress witnesses");
    if (p == null) {
      return null;
    }
    List<String> allowOut = new ArrayList<>();
    p.path("allowOut").forEach(a -> allowOut.add(a.asText()));
    return new EgressProbe(Json.requireText(p, "allowedHost"), Json.requireText(p, "deniedHost"),
        Json.requireText(p, "rawIp"), allowOut, Objects.requireNonNullElse(Json.text(p, "scheme"), "https"));
  }

  static EgressVerdict run(E2BSandboxProvider provider, EgressProbe probe) {
    LiveSandbox sandbox;
    try {
      sandbox = provider.create(SandboxConfig.forProject("egress-probe-" + System.currentTimeMillis())
          .withTimeout(PROBE_SANDBOX_TIMEOUT), OnTimeout.KILL, List.of());
    } catch (RuntimeException e) {
      return new EgressVerdict(EgressVerdict.State.INCONCLUSIVE, "Could not create a probe sandbox: " + e.getMessage(),
          "Check E2B_API_KEY and account capacity.");
    }
    EgressVerdict verdict;
    try {
      provider.api().updateNetwork(sandbox.id(), probe.allowOut(), List.of(io.sandboxes.SandboxNetwork.ALL_TRAFFIC));
      ExecOptions opts = ExecOptions.defaults().withTimeout(Duration.ofSeconds(30));
      String allowed = sandbox.exec(curl(probe, probe.allowedHost()), opts).stdout().strip();
      String deniedHost = sandbox.exec(curl(probe, probe.deniedHost()), opts).stdout().strip();
      String deniedIp = sandbox.exec(curl(probe, probe.rawIp()), opts).stdout().strip();
      verdict = classify(probe, allowed, deniedHost, deniedIp);
    } catch (RuntimeException e) {
      verdict = new EgressVerdict(EgressVerdict.State.INCONCLUSIVE, "Egress probe could not run: " + e.getMessage(), null);
    }
    return destroy(provider, sandbox.id(), verdict);
  }

  private static EgressVerdict destroy(E2BSandboxProvider provider, String id, EgressVerdict verdict) {
    RuntimeException last = null;
    for (int attempt = 0; attempt < 2; attempt++) {
      try {
        provider.destroy(id);
        return verdict;
      } catch (RuntimeException e) {
        last = e;
      }
    }
    return new EgressVerdict(verdict.state(), verdict.detail() + " (The probe sandbox " + id
        + " could not be destroyed and is left behind: " + last.getMessage() + ".)", verdict.remediation());
  }
}
