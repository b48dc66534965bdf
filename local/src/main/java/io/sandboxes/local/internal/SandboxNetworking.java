package io.sandboxes.local.internal;

import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.egress.SandboxNetwork;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where sandboxes' traffic may go: which network a sandbox starts on, the proxy variables naming
 * the egress gateway, joining the sandbox network when a policy allows something, the policy set
 * on a running sandbox, and its firewall entry written again after a restart of its container.
 * Without an egress network (it could not be set up) sandboxes have no network at all.
 */
final class SandboxNetworking {
  /** Logs under the registry's name, which operators filter on. */
  private static final Logger LOG = LoggerFactory.getLogger(Registry.class);

  private final Optional<SandboxNetwork> network;
  private final StateFiles states;

  SandboxNetworking(Optional<SandboxNetwork> network, StateFiles states) {
    this.network = network;
    this.states = states;
  }

  /** Takes a sandbox's container off the egress network's records (its address and firewall entry). */
  void detach(LocalSandbox s) {
    network.ifPresent(n -> n.detach(s.networkAddress(), s.instanceId()));
  }

  /** @return the egress network, when there is one */
  Optional<SandboxNetwork> network() {
    return network;
  }

  /** A restarted container has a new network namespace (and maybe address): its firewall is written again. */
  void reattach(LocalSandbox s) throws IOException {
    if (network.isPresent()) {
      network.get().detach(s.networkAddress(), s.instanceId());
      s.networkAddress(null);
      connect(s);
      if (s.networkAddress() != null) {
        // Docker wrote /etc/hosts afresh for the start: the "none" line is back beside the network's
        Thread.ofVirtual().name("sandboxes-hosts-" + s.id()).start(() -> settleHosts(s));
      }
    }
  }

  /** Where a sandbox's container starts: on "none" (null), unless every sandbox gets open egress. */
  @Nullable String startNetwork() {
    return network.filter(io.sandboxes.local.internal.egress.SandboxNetwork::startsOnBridge)
        .map(io.sandboxes.local.internal.egress.SandboxNetwork::networkName).orElse(null);
  }

  Map<String, String> proxyVars() {
    return network.map(io.sandboxes.local.internal.egress.SandboxNetwork::proxyVars).orElse(Map.of());
  }

  /**
   * Puts a running sandbox's container, as Docker has it now, under its policy: one on the sandbox
   * network gets its firewall written and its address registered; one still on "none" joins the
   * network (firewall first) when its policy allows something, and otherwise stays where nothing
   * can leave.
   */
  void connect(LocalSandbox s) throws IOException {
    io.sandboxes.local.internal.egress.SandboxNetwork n = network.orElseThrow();
    String ip = n.attachIfJoined(s.instanceId(), s::egressPolicy);
    if (ip == null && n.wantsBridge(s.egressPolicy())) {
      ip = n.join(s.instanceId(), s::egressPolicy);
      s.networkAddress(ip);
      settleHosts(s);
      installTrust(s);
      return;
    }
    s.networkAddress(ip);
    if (ip != null) {
      installTrust(s);
    }
  }

  /**
   * A sandbox that started on "none" has its hostname at {@link SandboxNetwork#isolatedHostAddress}
   * in /etc/hosts; once on the network Docker adds its address there too. The first line goes, so
   * /etc/hosts reads as a sandbox's that started on the network. Done in the sandbox by its daemon
   * (as root, writing the file in place: it is a mount point); best effort, as the sandbox owns
   * the file and may have changed it.
   */
  void settleHosts(LocalSandbox s) {
    runAsRoot(s, "settling /etc/hosts", SETTLE_HOSTS, network.orElseThrow().isolatedHostAddress().replace(".", "\\."));
  }

  /**
   * Writes the gateway's CA and the server's extra CAs into the sandbox's trust store
   * ({@link io.sandboxes.local.internal.egress.TrustStore}), as the sandbox joins the network
   * (at create, at a pool member's claim, on a network update, after a resume or a server's restart, whose CA is new)
   * when its policy has header rules or the server has extra CAs.
   * Best effort, as the sandbox owns its files: a failure is logged to the sandbox's log.
   */
  void installTrust(LocalSandbox s) {
    // a sandbox without header rules gets nothing from the gateway's CA, and a create or claim is not slowed by a write it
    // does not need: the CA is written when rules come (an update joins again) or the server has extra CAs
    String pem = network.map(n -> n.trustBundleFor(s.egressPolicy())).orElse(null);
    if (pem != null && !runAsRoot(s, "writing the egress gateway's CA into the trust store",
        io.sandboxes.local.internal.egress.TrustStore.INSTALL, pem)) {
      s.log("warn", "the egress gateway's CA could not be written into " + io.sandboxes.local.internal.egress.TrustStore.SYSTEM_BUNDLE
          + ": TLS to destinations with header rules will not verify");
    }
  }

  /** Runs a shell script in the sandbox through its daemon, as root, for up to 5 s; @return whether it exited 0. */
  private boolean runAsRoot(LocalSandbox s, String what, String script, String arg) {
    io.sandboxes.local.internal.daemon.DaemonProcess p;
    try {
      p = s.daemon().start(new io.sandboxes.local.internal.daemon.ProcessSpec(List.of("/bin/sh", "-c", script, "sh", arg),
          Map.of(), "/", null, null, false, null));
    } catch (IOException | RpcError | RuntimeException e) {
      LOG.debug("{} of {} failed: {}", what, s.id(), e.toString());
      return false;
    }
    try {
      p.exit().get(5, java.util.concurrent.TimeUnit.SECONDS);
      io.sandboxes.local.internal.daemon.DaemonProcess.Result r = p.collect();
      if (!r.status().exited() || r.status().exitCode() != 0) {
        LOG.debug("{} of {} ended {}: {}", what, s.id(), r.status(), r.stderrText().strip());
        return false;
      }
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      try {
        p.signal(9, true);
      } catch (IOException | RuntimeException again) {
        LOG.debug("could not stop {} in {}: {}", what, s.id(), again.toString());
      }
      LOG.debug("{} of {} took over 5 s; stopped", what, s.id());
    } catch (Exception e) {
      LOG.debug("{} of {} failed: {}", what, s.id(), e.toString());
    } finally {
      p.close();
    }
    return false;
  }

  /**
   * Drops the {@code $1} (a regex of the "none" address) lines of /etc/hosts when another line
   * still names the hostname; writes in place, since /etc/hosts is a mount point.
   */
  private static final String SETTLE_HOSTS = """
      f=/etc/hosts
      grep -q "^$1[[:space:]]" "$f" || exit 0
      h=$(grep -v "^$1[[:space:]]" "$f")
      printf '%s\n' "$h" | grep -qwF -- "$(hostname)" || exit 0
      printf '%s\n' "$h" > "$f"
      """;

  /** @return whether egress policies can be enforced (otherwise sandboxes have no network at all) */
  boolean egressEnforced() {
    return network.isPresent();
  }

  /** Stores a sandbox's network policy (a full replace) and enforces it at once. */
  void setNetwork(LocalSandbox s, NetworkPolicy policy, @Nullable Boolean allowInternetAccess)
      throws RpcError {
    s.transitions.lock(); // a join must not meet a pause, a resume or another join
    try {
      NetworkPolicy before = s.network();
      Boolean beforeInternet = s.allowInternetAccess();
      s.network(policy, allowInternetAccess);
      if (network.isPresent() && !s.paused()) {
        try {
          if (s.networkAddress() != null) {
            network.get().apply(s.instanceId(), s.egressPolicy());
            installTrust(s); // rules may have come with the update
          } else {
            connect(s);
          }
        } catch (IOException | RuntimeException e) {
          s.network(before, beforeInternet);
          throw new RpcError("internal", "the network policy could not be enforced: " + e.getMessage());
        }
      }
      states.persist(s);
    } finally {
      s.transitions.unlock();
    }
    // the rules' destinations only: a header's value, even a placeholder, is no log's business (nor is a proxy's password,
    // which its JSON never holds)
    s.log("info", "network policy set: " + Json.string(Json.MAPPER.valueToTree(new NetworkPolicy(policy.allowPublicTraffic(),
        policy.allowOut(), policy.denyOut(), null, policy.egressProxy(), policy.maskRequestHost())))
        + (policy.rules() == null ? "" : ", header rules for " + String.join(", ", policy.rules().keySet()))
        + (allowInternetAccess == null ? "" : ", allow_internet_access=" + allowInternetAccess));
  }
}
