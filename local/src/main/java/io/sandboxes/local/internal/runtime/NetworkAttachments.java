package io.sandboxes.local.internal.runtime;

import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What egress asks of the runtime about networks: the bridge networks sandboxes and build steps
 * join, where an instance is attached now and the host process that holds its network namespace,
 * and moving an instance from one network to another. Egress does the enforcing itself (it
 * enters the namespace from the host and writes the firewalls); this only says where things are
 * and moves them. A call the runtime could not carry out throws a {@link RuntimeException}.
 */
public interface NetworkAttachments {

  /**
   * A bridge network as the host sees it.
   *
   * @param name its name in the runtime
   * @param gateway the host's address on it, or null when the runtime names none
   * @param subnet its address range in CIDR notation, or null when the runtime names none
   * @param hostDevice the host's network device for it (the bridge firewall rules are bound to)
   */
  record Bridge(String name, @Nullable String gateway, @Nullable String subnet, String hostDevice) {}

  /**
   * Where an instance is attached now.
   *
   * @param pid the host's id of a process in its network namespace; null or not positive when it
   *     does not run
   * @param networks the names of every network it is on
   * @param addresses network name to its address there, for the networks on which the runtime
   *     gives it one (possibly empty)
   */
  record Attachment(@Nullable Long pid, Set<String> networks, Map<String, String> addresses) {
    /** Copies the names and addresses. */
    public Attachment {
      networks = Set.copyOf(networks);
      addresses = Map.copyOf(addresses);
    }
  }

  /**
   * Makes the bridge network {@code name} when it is not there (labelled as this server's, its
   * members unable to reach each other), another server making it at the same moment included.
   *
   * @return the network as it is now
   */
  Bridge ensureBridge(String name);

  /**
   * Looks at where an instance is attached.
   *
   * @throws RuntimeException when there is no such instance or the runtime could not be asked
   */
  Attachment attachment(String instanceId);

  /** Attaches a running instance to a network. */
  void connect(String instanceId, String network);

  /**
   * Takes a running instance off a network.
   *
   * @param force also when the runtime would refuse otherwise
   */
  void disconnect(String instanceId, String network, boolean force);

  /**
   * The name of the network on which an instance has loopback and nothing else: the one a sandbox
   * whose policy allows nothing stays on, which nothing else can be attached beside.
   */
  String isolatedNetwork();

  /**
   * The address an instance started on {@link #isolatedNetwork} has its own hostname at in its
   * {@code /etc/hosts}, beside the address a later attachment adds.
   */
  String isolatedHostAddress();
}
