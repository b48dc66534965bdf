package io.sandboxes.local.internal;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's network policy as E2B's {@code SandboxNetworkConfig} holds it, in its JSON field
 * order: what was said of public traffic, the allow-list and the deny-list, each null when not
 * said (and then left out of its JSON). Stored with the sandbox's state and reported in its detail.
 *
 * @param allowPublicTraffic false when its ports need the traffic token; fixed at create
 * @param allowOut the destinations it may reach (domains, IPs, CIDRs)
 * @param denyOut the addresses it may not reach (IPs, CIDRs)
 */
public record NetworkPolicy(@Nullable Boolean allowPublicTraffic, @Nullable List<String> allowOut, @Nullable List<String> denyOut) {
  /** A policy that says nothing. */
  public static final NetworkPolicy NONE = new NetworkPolicy(null, null, null);

  public NetworkPolicy {
    allowOut = allowOut == null ? null : List.copyOf(allowOut);
    denyOut = denyOut == null ? null : List.copyOf(denyOut);
  }

  /** @return whether it allows some destination */
  public boolean allowsSomething() {
    return allowOut != null && !allowOut.isEmpty();
  }

  /** @return this policy with what {@code other} says of public traffic */
  public NetworkPolicy withPublicTrafficOf(@Nullable NetworkPolicy other) {
    return new NetworkPolicy(other == null ? null : other.allowPublicTraffic(), allowOut, denyOut);
  }
}
