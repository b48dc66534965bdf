package io.sandboxes.local.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's network policy as E2B's {@code SandboxNetworkConfig} holds it, in its JSON field
 * order: what was said of public traffic, the allow-list and the deny-list, each null when not
 * said (and then left out of its JSON). Stored with the sandbox's state and reported in its detail.
 *
 * @param allowPublicTraffic false when its ports need the traffic token; fixed at create
 * @param allowOut the destinations it may reach (domains, IPs, CIDRs)
 * @param denyOut the addresses it may not reach (IPs, CIDRs)
 * @param rules header rules by destination, as given: their values hold secrets' placeholders
 *     ({@code ${e2b.secrets.<name>}}), never what they are filled with
 * @param egressProxy the SOCKS5 proxy what it may reach goes through, or null for none
 * @param maskRequestHost the {@code Host} requests to its ports arrive with, {@value #PORT_VARIABLE}
 *     replaced by the port, or null to pass on the Host they were sent with; fixed at create
 */
public record NetworkPolicy(@Nullable Boolean allowPublicTraffic, @Nullable List<String> allowOut, @Nullable List<String> denyOut,
    @Nullable Map<String, List<HostRule>> rules, @Nullable EgressProxySetting egressProxy, @Nullable String maskRequestHost) {
  /** A policy that says nothing. */
  public static final NetworkPolicy NONE = new NetworkPolicy(null, null, null);

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

  /**
   * One of E2B's {@code SandboxNetworkRule}s.
   *
   * @param transform what it does to a matching request; null for nothing
   */
  public record HostRule(@Nullable HeaderTransform transform) {}

  /**
   * E2B's {@code SandboxNetworkTransform}.
   *
   * @param headers the headers set on a matching request, replacing any of the same name
   */
  public record HeaderTransform(@Nullable Map<String, String> headers) {
    public HeaderTransform {
      headers = headers == null ? null : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }
  }

  public NetworkPolicy {
    allowOut = allowOut == null ? null : List.copyOf(allowOut);
    denyOut = denyOut == null ? null : List.copyOf(denyOut);
    if (rules != null) {
      Map<String, List<HostRule>> copy = new LinkedHashMap<>();
      rules.forEach((k, v) -> copy.put(k, List.copyOf(v)));
      rules = java.util.Collections.unmodifiableMap(copy);
    }
  }

  /** A policy without header rules, an egress proxy or a Host mask. */
  public NetworkPolicy(@Nullable Boolean allowPublicTraffic, @Nullable List<String> allowOut, @Nullable List<String> denyOut) {
    this(allowPublicTraffic, allowOut, denyOut, null, null, null);
  }

  /** What {@link #maskRequestHost} holds for the port a request is for. */
  public static final String PORT_VARIABLE = "${PORT}";

  /** The Host a request to {@code port} arrives with, or null to pass on the one it was sent with. */
  public @Nullable String requestHost(int port) {
    return maskRequestHost == null ? null : maskRequestHost.replace(PORT_VARIABLE, Integer.toString(port));
  }

  /** @return the header rules as the egress gateway applies them (empty when there are none) */
  public io.sandboxes.local.internal.egress.HeaderRules headerRules() {
    if (rules == null) {
      return io.sandboxes.local.internal.egress.HeaderRules.NONE;
    }
    Map<String, List<Map<String, String>>> byHost = new LinkedHashMap<>();
    rules.forEach((host, list) -> byHost.put(host, list.stream()
        .map(r -> r.transform() == null || r.transform().headers() == null ? Map.<String, String>of() : r.transform().headers())
        .toList()));
    return io.sandboxes.local.internal.egress.HeaderRules.of(byHost);
  }

  /** @return whether it allows some destination */
  public boolean allowsSomething() {
    return allowOut != null && !allowOut.isEmpty();
  }

  /** @return this policy with what {@code other} says of how its ports are reached (public traffic, the Host mask) */
  public NetworkPolicy withPortAccessOf(@Nullable NetworkPolicy other) {
    return new NetworkPolicy(other == null ? null : other.allowPublicTraffic(), allowOut, denyOut, rules, egressProxy,
        other == null ? null : other.maskRequestHost());
  }
}
