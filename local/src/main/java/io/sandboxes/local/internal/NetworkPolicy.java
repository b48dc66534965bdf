package io.sandboxes.local.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
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
 * @param egressProxy the SOCKS5 proxy what it may reach goes through, or null for none
 */
public record NetworkPolicy(@Nullable Boolean allowPublicTraffic, @Nullable List<String> allowOut, @Nullable List<String> denyOut,
    @Nullable EgressProxySetting egressProxy) {
  /** A policy that says nothing. */
  public static final NetworkPolicy NONE = new NetworkPolicy(null, null, null, null);

  /**
   * E2B's {@code SandboxEgressProxyConfig} as stored. Its JSON (a sandbox's detail, its log, its
   * state file) never holds the password, which is read from JSON but never written to it; the
   * state file adds it itself ({@code StateFiles}). {@link #toString()} never shows it either.
   *
   * @param address {@code host:port}
   * @param username the SOCKS5 user name, or null
   * @param password the SOCKS5 password, or null
   */
  public record EgressProxySetting(String address, @Nullable String username,
      @JsonProperty(access = JsonProperty.Access.WRITE_ONLY) @Nullable String password) {
    /** The address and user name; never the password. */
    @Override
    public String toString() {
      return "egressProxy " + address + (username == null ? "" : " as " + username);
    }
  }

  /** A policy without an egress proxy. */
  public NetworkPolicy(@Nullable Boolean allowPublicTraffic, @Nullable List<String> allowOut, @Nullable List<String> denyOut) {
    this(allowPublicTraffic, allowOut, denyOut, null);
  }

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
    return new NetworkPolicy(other == null ? null : other.allowPublicTraffic(), allowOut, denyOut, egressProxy);
  }
}
