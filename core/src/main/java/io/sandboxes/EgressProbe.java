package io.sandboxes;

import java.util.List;
import java.util.Objects;

/**
 * The targets of an egress probe: a host the probe's allow-list permits, a host it does not, and
 * a raw IP it does not. For E2B's cloud these are public hosts; against a local runtime they are
 * local witnesses, so that no probe from a developer's machine is aimed at the internet.
 *
 * @param allowedHost a host that must answer through the allow-list
 * @param deniedHost a live host that must be blocked
 * @param rawIp an IP address that must be blocked
 * @param allowOut the probe sandbox's allow-list (it must let {@code allowedHost} through)
 * @param scheme {@code https} or {@code http}
 * @since 0.1
 */
public record EgressProbe(String allowedHost, String deniedHost, String rawIp, List<String> allowOut, String scheme) {

  /** The probe the seed uses against E2B's cloud. */
  public static final EgressProbe E2B_CLOUD = new EgressProbe("registry.npmjs.org", "example.com", "1.1.1.1",
      List.of("registry.npmjs.org", "*.npmjs.org"), "https");

  /** Validates and copies the components. */
  public EgressProbe {
    Objects.requireNonNull(allowedHost, "allowedHost");
    Objects.requireNonNull(deniedHost, "deniedHost");
    Objects.requireNonNull(rawIp, "rawIp");
    allowOut = List.copyOf(Objects.requireNonNull(allowOut, "allowOut"));
    if (!scheme.equals("https") && !scheme.equals("http")) {
      throw new IllegalArgumentException("scheme must be http or https, got " + scheme);
    }
    for (String host : List.of(allowedHost, deniedHost, rawIp)) {
      if (!host.matches("[A-Za-z0-9.:-]+")) {
        throw new IllegalArgumentException("probe targets must be host names or IPs (with an optional port), got '" + host + "'");
      }
    }
  }
}
