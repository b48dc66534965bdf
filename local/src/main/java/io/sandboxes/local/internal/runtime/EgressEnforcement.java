package io.sandboxes.local.internal.runtime;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How a runtime enforces what egress decides: each sandbox's {@link EgressRules} written where
 * the sandbox cannot undo them. Egress owns the policies, the rules, the gateway and the order of
 * the steps (a sandbox's own rules are written before it joins a network, and set back to refuse
 * everything when a join fails); this writes, rewrites and removes the rules, in two places: inside
 * the instance ({@link #applyInside}), and on the host, keyed by the instance's address and the
 * port it is attached to its bridge by ({@link #enforce}), which nothing in the sandbox can reach.
 * Every method that writes fails with an {@link IOException} when it could not, and the caller
 * fails closed.
 */
public interface EgressEnforcement {

  /** A running instance as this enforcement reaches it; only the enforcement that gave it reads it. */
  interface Target {
    /** @return the instance's id in the runtime */
    String instanceId();
  }

  /**
   * Why this host cannot enforce egress (then sandboxes get no network at all), or null when it
   * can. Asked once, before {@link #start}.
   */
  @Nullable String unavailableBecause();

  /**
   * Makes the host's part ready (what a server that ended left behind is swept).
   *
   * @throws IOException when the host's rules cannot be written
   */
  void start() throws IOException;

  /**
   * Sends everything that comes in from a bridge through the sandboxes' rules on the host; what
   * matches no sandbox of it is refused. Idempotent.
   */
  void guard(NetworkAttachments.Bridge bridge) throws IOException;

  /**
   * Puts every instance on a bridge under the same rules, for a network whose members all share
   * one policy (template builds), where no member needs telling apart.
   *
   * @param name the name the shared rules are kept under
   */
  void share(NetworkAttachments.Bridge bridge, String name, EgressRules rules) throws IOException;

  /**
   * Looks every {@code interval} whether the host still holds what was written, and writes it
   * again when something outside took it away, until {@link #close}.
   */
  void watch(Duration interval);

  /**
   * Reaches a running instance where it is attached now.
   *
   * @throws IOException when it does not run
   */
  Target target(String instanceId, NetworkAttachments.Attachment where) throws IOException;

  /**
   * Writes the instance's own rules, replacing all it had at once.
   *
   * @param hostAddresses the host's own IPv4 addresses, for where the instance cannot tell them by type
   */
  void applyInside(Target target, EgressRules rules, List<String> hostAddresses) throws IOException;

  /**
   * @return the host's name for the port by which the instance is attached to its bridge: the
   *     host's rules know the instance by it as well as by its address
   * @throws IOException when it has not exactly one such port on this host
   */
  String port(Target target) throws IOException;

  /**
   * Puts the sandbox at {@code address}, attached by {@code port}, under {@code rules} on the host
   * (written anew when it is there already).
   */
  void enforce(String address, String port, EgressRules rules) throws IOException;

  /** @return the port of the sandbox at {@code address} the host's rules know it by, or null when they do not hold it */
  @Nullable String portOf(String address);

  /** Takes the sandbox at {@code address} out of the host's rules, when they hold it; best effort. */
  void forget(String address);

  /** Stops {@link #watch}ing. What was written stays: kept sandboxes stay enforced. */
  void close();
}
