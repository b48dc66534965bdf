package io.sandboxes.local.internal.docker.firewall;

import io.sandboxes.local.internal.host.HostTools;
import io.sandboxes.local.internal.runtime.EgressEnforcement;
import io.sandboxes.local.internal.runtime.EgressRules;
import io.sandboxes.local.internal.runtime.NetworkAttachments;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Egress enforced for containers that share the host's kernel: inside each sandbox's network
 * namespace (entered from the host as root with {@code nsenter} by its container's process, never
 * trusting the sandbox) iptables drops everything but loopback and what the rules allow, and
 * rejects DNS to Docker's embedded resolver ({@code 127.0.0.11}) unless the policy lets names be
 * resolved there; on the host, {@link HostFirewall}'s chains (hooked into Docker's
 * {@code DOCKER-USER}) hold the same rules keyed by the sandbox's address and veth. It needs root
 * on the Docker host, {@code nsenter}, {@code iptables}, {@code iptables-restore} and {@code ip}.
 */
public final class DockerEgressEnforcement implements EgressEnforcement {
  /**
   * How the namespace's firewall refuses a packet: rejected, so the process's connect fails at
   * once ("no route to host", the kernel's word for a filtered destination) instead of hanging
   * until it times out, which a person or a model reads as a flaky network.
   */
  private static final String REFUSE = "REJECT --reject-with icmp-admin-prohibited";
  private static final Pattern PEER = Pattern.compile("(?m)^\\d+: [^:@\\s]+@if(\\d+):");

  private @Nullable HostFirewall hostFirewall;

  /** A running container, reached through a process of its network namespace. */
  private record Namespace(String instanceId, long pid) implements Target {}

  /** Enforces nothing until {@link #start}. */
  public DockerEgressEnforcement() {}

  @Override
  public @Nullable String unavailableBecause() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return "the server does not run as root";
    }
    for (String tool : List.of("nsenter", "iptables", "iptables-restore", "ip")) {
      if (HostTools.find(tool) == null) {
        return tool + " is not installed";
      }
    }
    return null;
  }

  @Override
  public void start() throws IOException {
    hostFirewall = HostFirewall.start();
  }

  private HostFirewall host() {
    HostFirewall h = hostFirewall;
    if (h == null) {
      throw new IllegalStateException("the host firewall is not started");
    }
    return h;
  }

  @Override
  public void guard(NetworkAttachments.Bridge bridge) throws IOException {
    host().guard(bridge.hostDevice());
  }

  @Override
  public void share(NetworkAttachments.Bridge bridge, String name, EgressRules rules) throws IOException {
    host().shared(bridge.hostDevice(), name, rules.rules());
  }

  @Override
  public void watch(Duration interval) {
    host().watch(interval);
  }

  @Override
  public Target target(String instanceId, NetworkAttachments.Attachment where) throws IOException {
    Long pid = where.pid();
    if (pid == null || pid <= 0) {
      throw new IOException("container " + instanceId + " is not running");
    }
    return new Namespace(instanceId, pid);
  }

  private static Namespace namespace(Target target) {
    if (target instanceof Namespace n) {
      return n;
    }
    throw new IllegalArgumentException("not a container reached by this enforcement: " + target.instanceId());
  }

  @Override
  public void applyInside(Target target, EgressRules rules, List<String> hostAddresses) throws IOException {
    Namespace n = namespace(target);
    String restore = HostTools.require("iptables-restore");
    HostTools.check("nsenter", List.of("-t", Long.toString(n.pid()), "-n", restore), table(rules, hostAddresses),
        "applying the egress firewall to " + n.instanceId());
  }

  /** The namespace's whole filter table for the rules, as {@code iptables-restore} reads it. */
  static String table(EgressRules rules, List<String> hostAddresses) {
    StringBuilder r = new StringBuilder("*filter\n");
    if (rules.open()) {
      r.append(":INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n");
      return r.toString();
    }
    r.append(":INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n");
    r.append("-A INPUT -i lo -j ACCEPT\n");
    r.append("-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n");
    if (!rules.resolverAllowed()) {
      // Docker's resolver lives on loopback and would forward any name: no query leaves
      r.append("-A OUTPUT -o lo -d 127.0.0.11 -j REJECT\n");
    }
    r.append("-A OUTPUT -o lo -j ACCEPT\n");
    r.append(IptablesRules.inside(rules.rules(), hostAddresses, "OUTPUT", "ACCEPT", REFUSE));
    r.append("COMMIT\n");
    return r.toString();
  }

  /**
   * The host side of a container's one network interface (its veth on the bridge), found by the
   * peer index the interface reports in the container's namespace, read with the host's own
   * {@code ip} (nothing of the sandbox's is run) and matched to the host's interfaces.
   */
  @Override
  public String port(Target target) throws IOException {
    Namespace n = namespace(target);
    String containerId = n.instanceId();
    String links = HostTools.check("nsenter", List.of("-t", Long.toString(n.pid()), "-n", HostTools.require("ip"), "-o", "link", "show"),
        null, "listing the network interfaces of " + containerId);
    Matcher m = PEER.matcher(links);
    List<Integer> peers = new ArrayList<>();
    while (m.find()) {
      peers.add(Integer.parseInt(m.group(1)));
    }
    if (peers.size() != 1) {
      throw new IOException("container " + containerId + " has " + peers.size() + " network interfaces with a host side, not one");
    }
    try (Stream<Path> nets = Files.list(Path.of("/sys/class/net"))) {
      for (Path dev : nets.toList()) {
        if (peers.get(0).toString().equals(ifindex(dev))) {
          return dev.getFileName().toString();
        }
      }
    }
    throw new IOException("the host side of container " + containerId + "'s network interface (index " + peers.get(0) + ") is not on this host");
  }

  /**
   * A host interface's index, or null for one going away while it is read: a container being
   * removed takes its veth with it, and reading the index of one half torn down fails with
   * {@code EINVAL} (seen when sandboxes were removed while others were created).
   */
  private static @org.jspecify.annotations.Nullable String ifindex(Path dev) {
    try {
      return Files.readString(dev.resolve("ifindex")).strip();
    } catch (IOException gone) {
      return null;
    }
  }

  @Override
  public void enforce(String address, String port, EgressRules rules) throws IOException {
    host().enforce(address, port, rules.rules());
  }

  @Override
  public @Nullable String portOf(String address) {
    return host().portOf(address);
  }

  @Override
  public void forget(String address) {
    host().forget(address);
  }

  @Override
  public void close() {
    host().close();
  }
}
