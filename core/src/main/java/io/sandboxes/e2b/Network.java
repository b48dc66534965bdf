package io.sandboxes.e2b;

import io.sandboxes.SandboxNetwork;
import java.util.Objects;
import java.util.Optional;

/**
 * The network of one running sandbox: read it and replace it, as E2B's
 * {@code sandbox.updateNetwork(update)} and {@code getInfo().network}. Set it at create with
 * {@link io.sandboxes.SandboxSpec#withNetwork(SandboxNetwork)}, so the sandbox never runs under
 * another policy.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=network :
 * sandbox.network().update(SandboxNetwork.allowOnly("api.example.com"));
 * sandbox.network().current().ifPresent(n -> System.out.println(n.allowOut()));
 * }
 *
 * <p>Obtained from {@link LiveSandbox#network()}; cheap and holds nothing.
 *
 * @since 0.1
 */
public final class Network {
  private final LiveSandbox sandbox;

  Network(LiveSandbox sandbox) {
    this.sandbox = sandbox;
  }

  /**
   * Replaces the sandbox's egress policy, as E2B's {@code updateNetwork}: allowOut, denyOut, rules
   * and allowInternetAccess. What the update leaves out is cleared (it is not merged into the
   * current policy); the sandbox must be running.
   *
   * @param network the new policy
   * @throws IllegalArgumentException when it sets allowPublicTraffic or maskRequestHost, which are
   *     fixed at create
   * @throws io.sandboxes.SandboxNotFoundException when the sandbox is gone
   * @throws io.sandboxes.SandboxApiException when the server refuses the policy (a paused sandbox,
   *     a field it does not serve)
   */
  public void update(SandboxNetwork network) {
    sandbox.api().updateNetwork(sandbox.id(), Objects.requireNonNull(network, "network"));
  }

  /**
   * Reads the sandbox's network as the control plane reports it now ({@code info().network()}).
   *
   * @return the network, or empty when the server reports none
   * @throws io.sandboxes.SandboxException when the record could not be had or read; never empty in
   *     its place
   */
  public Optional<SandboxNetwork> current() {
    return Optional.ofNullable(sandbox.info().network());
  }

  @Override
  public String toString() {
    return "Network[" + sandbox.id() + "]";
  }
}
