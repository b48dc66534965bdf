package io.sandboxes.local.internal.egress;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.Network;
import io.sandboxes.EgressProbe;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Egress for the local runtime. Sandboxes sit on a Docker bridge network the server made; inside
 * each sandbox's network namespace (entered from the host as root, never trusting the sandbox)
 * iptables drops everything but loopback and, when the policy allows anything, the egress
 * gateway's port and the allowed IPs and CIDRs. Names go through the gateway, which checks them
 * against the policy; DNS to Docker's resolver is dropped, so no query for any name leaves.
 * Witness endpoints give egress verification something real to observe.
 */
public final class SandboxNetwork implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxNetwork.class);
  public static final String NETWORK = "sandboxes-egress";
  public static final String ALLOWED_WITNESS = "allowed.witness.sandboxes.test";
  public static final String DENIED_WITNESS = "denied.witness.sandboxes.test";

  private final DockerRuntime docker;
  private final InetAddress gateway;
  private final EgressGateway proxy;
  private final List<Witnesses.Witness> witnesses;
  private final InetSocketAddress rawWitness;
  private final boolean open;

  private SandboxNetwork(DockerRuntime docker, InetAddress gateway, EgressGateway proxy, List<Witnesses.Witness> witnesses,
      InetSocketAddress rawWitness, boolean open) {
    this.docker = docker;
    this.gateway = gateway;
    this.proxy = proxy;
    this.witnesses = witnesses;
    this.rawWitness = rawWitness;
    this.open = open;
  }

  /**
   * Sets egress up, or says why it cannot (it needs root on the Docker host, nsenter and
   * iptables); then sandboxes simply have no network.
   *
   * @param open every sandbox gets unrestricted networking (for testing verification only)
   * @param allowedWitnessUp whether the allowed witness answers (tests stop it to see "inconclusive")
   */
  public static Optional<SandboxNetwork> start(DockerRuntime docker, boolean open, boolean allowedWitnessUp) {
    String why = unavailableBecause();
    if (why != null) {
      LOG.warn("egress policies cannot be enforced here ({}): every sandbox has no network at all", why);
      return Optional.empty();
    }
    try {
      InetAddress gateway = ensureNetwork(docker);
      Witnesses.Witness allowed = Witnesses.start(InetAddress.getLoopbackAddress(), "allowed");
      Witnesses.Witness denied = Witnesses.start(InetAddress.getLoopbackAddress(), "denied");
      Witnesses.Witness raw = Witnesses.start(gateway, "raw-ip");
      InetSocketAddress allowedAt = allowed.address();
      if (!allowedWitnessUp) {
        allowed.close();
      }
      EgressGateway proxy = new EgressGateway(gateway, Map.of(ALLOWED_WITNESS, allowedAt, DENIED_WITNESS, denied.address()));
      LOG.atInfo().addKeyValue("event", "egress.ready").addKeyValue("gateway", proxy.address()).addKeyValue("open", open)
          .log("egress gateway ready");
      return Optional.of(new SandboxNetwork(docker, gateway, proxy, List.of(allowed, denied, raw), raw.address(), open));
    } catch (IOException | RuntimeException e) {
      LOG.warn("egress could not be set up ({}): every sandbox has no network at all", e.toString());
      return Optional.empty();
    }
  }

  private static @Nullable String unavailableBecause() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return "the server does not run as root";
    }
    for (String tool : List.of("nsenter", "iptables-restore")) {
      if (!onPath(tool)) {
        return tool + " is not installed";
      }
    }
    return null;
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
      if (new java.io.File(dir, tool).canExecute()) {
        return true;
      }
    }
    return new java.io.File("/usr/sbin/" + tool).canExecute();
  }

  private static InetAddress ensureNetwork(DockerRuntime docker) throws IOException {
    List<Network> existing = docker.client().listNetworksCmd().withNameFilter(NETWORK).exec();
    Network net = existing.stream().filter(n -> NETWORK.equals(n.getName())).findFirst().orElse(null);
    if (net == null) {
      docker.client().createNetworkCmd().withName(NETWORK).withDriver("bridge")
          .withLabels(Map.of(DockerRuntime.LABEL_OURS, "true"))
          .withOptions(Map.of("com.docker.network.bridge.enable_icc", "false"))
          .exec();
      net = docker.client().inspectNetworkCmd().withNetworkId(NETWORK).exec();
    }
    String gw = net.getIpam().getConfig().get(0).getGateway();
    return InetAddress.getByName(gw);
  }

  public String networkName() {
    return NETWORK;
  }

  public boolean open() {
    return open;
  }

  /** What tools need to find the gateway: the usual proxy variables (none in open mode). */
  public List<String> proxyEnv() {
    if (open) {
      return List.of();
    }
    String url = "http://" + proxy.address().getAddress().getHostAddress() + ":" + proxy.address().getPort();
    return List.of("HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
        "NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1");
  }

  /** What egress verification should probe against this server. */
  public EgressProbe probe() {
    return new EgressProbe(ALLOWED_WITNESS, DENIED_WITNESS,
        rawWitness.getAddress().getHostAddress() + ":" + rawWitness.getPort(), List.of(ALLOWED_WITNESS), "http");
  }

  /**
   * Puts a running container under a policy: registers its address with the gateway and writes
   * its namespace's firewall. Fails closed: an error here must fail the caller.
   *
   * @return the container's address on the sandbox network
   */
  public String attach(String containerId, Supplier<EgressPolicy> policy) throws IOException {
    InspectContainerResponse info = docker.client().inspectContainerCmd(containerId).exec();
    ContainerNetwork net = info.getNetworkSettings().getNetworks().get(NETWORK);
    if (net == null || net.getIpAddress() == null || net.getIpAddress().isEmpty()) {
      throw new IOException("container " + containerId + " has no address on " + NETWORK);
    }
    String ip = net.getIpAddress();
    proxy.register(ip, host -> policy.get());
    apply(containerId, policy.get());
    return ip;
  }

  /**
   * Puts a warm pool member, already attached under deny-all, under its claimant's policy: the
   * gateway asks the new policy from now on, and the firewall is rewritten when the policy allows
   * more than the deny-all it has (a rewrite to the same rules would only cost time).
   */
  public void rebind(@Nullable String ip, String containerId, Supplier<EgressPolicy> policy) throws IOException {
    if (ip == null) {
      throw new IOException("container " + containerId + " has no address on " + NETWORK);
    }
    proxy.register(ip, host -> policy.get());
    EgressPolicy now = policy.get();
    if (!now.equals(EgressPolicy.DENY_ALL)) {
      apply(containerId, now);
    }
  }

  public void detach(@Nullable String ip) {
    if (ip != null) {
      proxy.unregister(ip);
    }
  }

  /** Rewrites the container's firewall for the policy (a whole-table replace, so it is atomic). */
  public void apply(String containerId, EgressPolicy policy) throws IOException {
    Long pid = docker.client().inspectContainerCmd(containerId).exec().getState().getPidLong();
    if (pid == null || pid <= 0) {
      throw new IOException("container " + containerId + " is not running");
    }
    String rules = rules(policy);
    Process p = new ProcessBuilder("nsenter", "-t", Long.toString(pid), "-n", "iptables-restore").redirectErrorStream(true).start();
    p.getOutputStream().write(rules.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IOException("applying the egress firewall to " + containerId + " failed: " + out.strip());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while applying the egress firewall", e);
    }
  }

  String rules(EgressPolicy policy) {
    StringBuilder r = new StringBuilder("*filter\n");
    if (open) {
      r.append(":INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n");
      return r.toString();
    }
    r.append(":INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT DROP [0:0]\n");
    r.append("-A INPUT -i lo -j ACCEPT\n");
    r.append("-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n");
    if (!policy.internetAccess()) {
      // Docker's resolver lives on loopback and would forward any name: no query leaves
      r.append("-A OUTPUT -o lo -d 127.0.0.11 -j DROP\n");
    }
    r.append("-A OUTPUT -o lo -j ACCEPT\n");
    if (policy.allowsAnything()) {
      r.append("-A OUTPUT -d ").append(gateway.getHostAddress()).append(" -p tcp --dport ").append(proxy.address().getPort())
          .append(" -j ACCEPT\n");
    }
    for (String cidr : policy.allowedCidrs()) {
      r.append("-A OUTPUT -d ").append(cidr).append(" -j ACCEPT\n");
    }
    if (policy.internetAccess()) {
      for (String deny : policy.denyOut()) {
        r.append("-A OUTPUT -d ").append(deny).append(" -j DROP\n");
      }
      r.append("-A OUTPUT -j ACCEPT\n");
    }
    r.append("COMMIT\n");
    return r.toString();
  }

  @Override
  public void close() {
    proxy.close();
    witnesses.forEach(Witnesses.Witness::close);
  }
}
