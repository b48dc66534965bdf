package io.sandboxes.local.internal.egress;

import io.sandboxes.local.internal.common.Ipv4;
import io.sandboxes.local.internal.runtime.EgressEnforcement;
import io.sandboxes.local.internal.runtime.EgressRules;
import io.sandboxes.local.internal.runtime.NetworkAttachments;
import io.sandboxes.EgressProbe;
import io.sandboxes.local.internal.common.StructuredLog;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Egress for the local runtime. A sandbox whose policy allows nothing sits on the runtime's
 * isolated network (loopback only); one whose policy allows something is on a bridge network the
 * server made, joined when that policy is first applied, its firewall written first. The runtime's
 * {@link EgressEnforcement} writes each sandbox's {@link PolicyRules} inside the sandbox (where
 * nothing but loopback and, when the policy allows anything, the egress gateway's port and the
 * allowed IPs and CIDRs may be reached) and on the host, where the sandbox cannot reach them.
 * Names go through the gateway, which checks them against the policy; unless the policy allows
 * the internet, the runtime's own resolver is refused, so no query for any name leaves. Witness
 * endpoints give egress verification something real to observe.
 */
public final class SandboxNetwork implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxNetwork.class);
  public static final String NETWORK = "sandboxes-egress";
  /** Where template builds' steps run: their own bridge, with the same refusals as sandboxes. */
  public static final String BUILD_NETWORK = "sandboxes-builds";
  /** How often the host's firewall is looked at for what something outside took away. */
  static final java.time.Duration FIREWALL_CHECK_INTERVAL = java.time.Duration.ofSeconds(5);
  public static final String ALLOWED_WITNESS = "allowed.witness.sandboxes.test";
  public static final String DENIED_WITNESS = "denied.witness.sandboxes.test";

  private final NetworkAttachments attachments;
  private final InetAddress gateway;
  private final EgressGateway proxy;
  private final List<Witnesses.Witness> witnesses;
  private final InetSocketAddress rawWitness;
  private final boolean open;
  private final Destinations destinations;
  private final EgressEnforcement enforcement;
  /**
   * Which container holds each address now. Docker hands a removed container's address to the
   * next one on the network at once (a warm pool refill often), so a detach that comes after the
   * removal must not take the gateway registration and host firewall entries of the new holder.
   */
  private final java.util.concurrent.ConcurrentHashMap<String, String> holders = new java.util.concurrent.ConcurrentHashMap<>();
  /** What every sandbox on the network trusts besides its image's CAs (PEM), once the gateway intercepts; null before. */
  private volatile @Nullable String trustBundle;
  private volatile boolean extraCas;

  private SandboxNetwork(NetworkAttachments attachments, InetAddress gateway, EgressGateway proxy, List<Witnesses.Witness> witnesses,
      InetSocketAddress rawWitness, boolean open, Destinations destinations, EgressEnforcement enforcement) {
    this.attachments = attachments;
    this.gateway = gateway;
    this.proxy = proxy;
    this.witnesses = witnesses;
    this.rawWitness = rawWitness;
    this.open = open;
    this.destinations = destinations;
    this.enforcement = enforcement;
  }

  /**
   * Sets egress up, or says why it cannot (the runtime's enforcement says what it needs); then
   * sandboxes simply have no network.
   *
   * @param attachments the runtime's networks and where its instances are attached
   * @param enforcement how the runtime writes the sandboxes' firewalls
   * @param open every sandbox gets unrestricted networking (for testing verification only)
   * @param allowedWitnessUp whether the allowed witness answers (tests stop it to see "inconclusive")
   */
  public static Optional<SandboxNetwork> start(NetworkAttachments attachments, EgressEnforcement enforcement, boolean open,
      boolean allowedWitnessUp) {
    return start(attachments, enforcement, open, allowedWitnessUp, null);
  }

  /**
   * As {@link #start(NetworkAttachments, EgressEnforcement, boolean, boolean)}, with a server-wide
   * upstream proxy every allowed connection goes through (unless its sandbox has its own
   * {@code egressProxy}, or it is to a witness).
   *
   * @param upstream the server-wide proxy, or null for none
   */
  public static Optional<SandboxNetwork> start(NetworkAttachments attachments, EgressEnforcement enforcement, boolean open,
      boolean allowedWitnessUp, @Nullable UpstreamProxy upstream) {
    String why = enforcement.unavailableBecause();
    if (why != null) {
      LOG.warn("egress policies cannot be enforced here ({}): every sandbox has no network at all", why);
      return Optional.empty();
    }
    try {
      NetworkAttachments.Bridge net = attachments.ensureBridge(NETWORK);
      NetworkAttachments.Bridge builds = attachments.ensureBridge(BUILD_NETWORK);
      InetAddress gateway = InetAddress.getByName(net.gateway());
      Destinations destinations = new Destinations(List.of(subnetOf(net), subnetOf(builds)));
      enforcement.start();
      enforcement.guard(net);
      enforcement.guard(builds);
      enforcement.share(builds, "SANDBOXES-BUILDS", PolicyRules.enforced(new EgressPolicy(List.of(), List.of(), true), false,
          gateway.getHostAddress(), List.of(), destinations.sandboxSubnets()));
      Witnesses.Witness allowed = Witnesses.start(InetAddress.getLoopbackAddress(), "allowed");
      Witnesses.Witness denied = Witnesses.start(InetAddress.getLoopbackAddress(), "denied");
      Witnesses.Witness raw = Witnesses.start(gateway, "raw-ip");
      InetSocketAddress allowedAt = allowed.address();
      if (!allowedWitnessUp) {
        allowed.close();
      }
      EgressGateway proxy = new EgressGateway(gateway, Map.of(ALLOWED_WITNESS, allowedAt, DENIED_WITNESS, denied.address()),
          destinations, upstream);
      StructuredLog.atInfo(LOG).addKeyValue("event", "egress.ready").addKeyValue("gateway", proxy.address()).addKeyValue("open", open)
          .addKeyValue("upstream", upstream == null ? "none" : upstream.toString()).log("egress gateway ready");
      enforcement.watch(FIREWALL_CHECK_INTERVAL);
      return Optional.of(new SandboxNetwork(attachments, gateway, proxy, List.of(allowed, denied, raw), raw.address(), open,
          destinations, enforcement));
    } catch (IOException | RuntimeException e) {
      LOG.warn("egress could not be set up ({}): every sandbox has no network at all", e.toString());
      return Optional.empty();
    }
  }

  private static String subnetOf(NetworkAttachments.Bridge net) throws IOException {
    String subnet = net.subnet();
    if (subnet == null || Ipv4.parse(subnet.substring(0, Math.max(0, subnet.indexOf('/')))) < 0) {
      throw new IOException("network " + net.name() + " has no IPv4 subnet: " + subnet);
    }
    return subnet;
  }

  /**
   * Has the gateway serve destinations with header rules through {@code interception}, and every
   * sandbox that joins the network from now on trust its CA and the server's extra CAs
   * ({@link #trustBundle}).
   */
  public void interceptWith(RuleInterception interception) {
    trustBundle = interception.trustBundle();
    extraCas = interception.hasExtraCas();
    proxy.intercept(interception);
  }

  /** For tests only: the gateway connects {@code name} to {@code address}, as it does a witness's name. */
  public void answerForTesting(String name, InetSocketAddress address) {
    proxy.answer(name, address);
  }

  /**
   * @return the certificates (PEM) every sandbox on the network is to trust: the gateway CA's and
   *     the server's extra CAs; null when the gateway intercepts nothing
   */
  public @Nullable String trustBundle() {
    return trustBundle;
  }

  /**
   * @return the certificates a sandbox under {@code policy} needs in its trust store now, or null
   *     when it needs none: without header rules the gateway intercepts none of its connections,
   *     so only the server's extra CAs (when it was given any) call for a write
   */
  public @Nullable String trustBundleFor(EgressPolicy policy) {
    return extraCas || !policy.rules().byHost().isEmpty() ? trustBundle : null;
  }

  public String networkName() {
    return NETWORK;
  }

  /**
   * @return the address a sandbox started on the isolated network has its hostname at in its
   *     {@code /etc/hosts}, beside the one joining the sandbox network adds
   */
  public String isolatedHostAddress() {
    return attachments.isolatedHostAddress();
  }

  public boolean open() {
    return open;
  }

  /** What the proxy variables leave out: the sandbox itself, by each name a tool may give it. */
  static final String LOCAL_ADDRESSES = "localhost,127.0.0.1,::1,0.0.0.0";

  /** What tools need to find the gateway: the usual proxy variables (none in open mode). */
  public List<String> proxyEnv() {
    List<String> env = new java.util.ArrayList<>();
    proxyVars().forEach((k, v) -> env.add(k + "=" + v));
    return env;
  }

  /**
   * The proxy variables naming this server's gateway, which every process a sandbox starts is
   * given: a sandbox an earlier server made carries that server's gateway port in its container
   * environment, and the port changes with each server.
   */
  public Map<String, String> proxyVars() {
    if (open) {
      return Map.of();
    }
    String url = "http://" + proxy.address().getAddress().getHostAddress() + ":" + proxy.address().getPort();
    Map<String, String> vars = new java.util.LinkedHashMap<>();
    for (String name : List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")) {
      vars.put(name, url);
    }
    // the sandbox's own addresses: a service inside it is reached directly, as E2B's tests reach
    // the code interpreter at http://0.0.0.0:49999 (the gateway refuses those as destinations)
    vars.put("NO_PROXY", LOCAL_ADDRESSES);
    vars.put("no_proxy", LOCAL_ADDRESSES);
    if (trustBundle != null) {
      // the system bundle holds the gateway's CA once a sandbox joins; Node and Python's requests read their own otherwise
      vars.put("SSL_CERT_FILE", TrustStore.SYSTEM_BUNDLE);
      vars.put("REQUESTS_CA_BUNDLE", TrustStore.SYSTEM_BUNDLE);
      // the system bundle, not ours alone: it is there in a sandbox that needed no CA, where Node warns at every start
      // about an extra-certificates file that does not exist
      vars.put("NODE_EXTRA_CA_CERTS", TrustStore.SYSTEM_BUNDLE);
    }
    return Map.copyOf(vars);
  }

  /**
   * For a sandbox an earlier server made: when its container environment names that server's
   * gateway port on this network, the gateway listens there too (best effort), so processes
   * started before the restart keep their proxy. Call before the sandbox's firewall is written.
   */
  public void keepProxyPortOf(List<String> containerEnv) {
    if (open) {
      return;
    }
    String prefix = "HTTP_PROXY=http://" + gateway.getHostAddress() + ":";
    for (String kv : containerEnv) {
      if (kv.startsWith(prefix)) {
        try {
          int port = Integer.parseInt(kv.substring(prefix.length()));
          if (port != proxy.address().getPort()) {
            proxy.listenAlso(port);
          }
        } catch (NumberFormatException e) {
          LOG.debug("a sandbox's proxy variable names no port: {}", kv);
        }
      }
    }
  }

  /**
   * Why a sandbox under {@code policy} may not have {@code proxy} as its {@code egressProxy}, or
   * null when it may: its name must resolve, and every address it resolves to must be one the
   * gateway may reach for that sandbox ({@link Destinations#proxyRefusal}). Checked again at each
   * connection, where the name is resolved afresh.
   */
  public @Nullable String proxyRefusal(UpstreamProxy proxy, EgressPolicy policy) {
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(proxy.host());
    } catch (java.net.UnknownHostException e) {
      return proxy.host() + " does not resolve";
    }
    for (InetAddress a : addresses) {
      String why = destinations.proxyRefusal(a, policy);
      if (why != null) {
        return proxy.host() + (proxy.host().equals(a.getHostAddress()) ? " is " : " resolves to " + a.getHostAddress() + ", ") + why;
      }
    }
    return null;
  }

  /** What egress verification should probe against this server. */
  public EgressProbe probe() {
    return new EgressProbe(ALLOWED_WITNESS, DENIED_WITNESS,
        rawWitness.getAddress().getHostAddress() + ":" + rawWitness.getPort(), List.of(ALLOWED_WITNESS), "http");
  }

  /**
   * Whether a sandbox under this policy needs the sandbox network: only when the policy allows
   * something (or in open mode, where everything is allowed). Others start, and stay, on Docker's
   * network {@code none}, where nothing but loopback exists, so nothing can leave and no firewall
   * is needed (and the bridge's start-up cost is not paid).
   */
  public boolean wantsBridge(EgressPolicy policy) {
    return open || policy.allowsAnything();
  }

  /** @return whether every sandbox starts on the sandbox network (open mode), not on {@code none} */
  public boolean startsOnBridge() {
    return open;
  }

  /**
   * Puts a running container that is on the sandbox network under a policy: registers its address
   * with the gateway and writes its namespace's firewall. Fails closed: an error here must fail
   * the caller.
   *
   * @return the container's address on the sandbox network
   * @throws IOException when it has none (use {@link #attachIfJoined} for a container that may be on {@code none})
   */
  public String attach(String containerId, Supplier<EgressPolicy> policy) throws IOException {
    String ip = attachIfJoined(containerId, policy);
    if (ip == null) {
      throw new IOException("container " + containerId + " has no address on " + NETWORK);
    }
    return ip;
  }

  /**
   * As {@link #attach} for a container on the sandbox network; a container that is not on it (it
   * started on {@code none} and never joined) is left alone.
   *
   * @return its address on the sandbox network, or null when it is not on it
   */
  public @Nullable String attachIfJoined(String containerId, Supplier<EgressPolicy> policy) throws IOException {
    return attachIfJoined(containerId, policy, true);
  }

  /** @param writeNamespace whether the namespace's firewall is (re)written: not when a join just wrote it */
  private @Nullable String attachIfJoined(String containerId, Supplier<EgressPolicy> policy, boolean writeNamespace)
      throws IOException {
    NetworkAttachments.Attachment info = attachments.attachment(containerId);
    String ip = info.addresses().get(NETWORK);
    if (ip == null || ip.isEmpty()) {
      return null;
    }
    EgressEnforcement.Target target = enforcement.target(containerId, info);
    holders.put(ip, containerId);
    proxy.register(ip, host -> policy.get());
    EgressPolicy now = policy.get();
    if (writeNamespace) {
      apply(target, now);
    }
    String port = enforcement.port(target);
    enforcement.enforce(ip, port, rulesFor(now));
    return ip;
  }

  /**
   * Moves a running container from {@code none} onto the sandbox network under a policy. The
   * firewall for the policy is written into the container's network namespace first (the
   * namespace is kept when networks change), and only then is the container connected, so no
   * packet ever leaves under anything but the policy. Fails closed: when anything after the
   * firewall fails, the firewall is set back to deny-all and the container taken off the
   * network again (as far as Docker lets), and the caller gets the error.
   *
   * @return the container's address on the sandbox network
   */
  public String join(String containerId, Supplier<EgressPolicy> policy) throws IOException {
    NetworkAttachments.Attachment info = attachments.attachment(containerId);
    EgressEnforcement.Target target = enforcement.target(containerId, info);
    apply(target, policy.get());
    boolean connected = false;
    try {
      String isolated = attachments.isolatedNetwork();
      if (info.networks().contains(isolated)) {
        // the runtime connects nothing else to a container on its private "none" network
        attachments.disconnect(containerId, isolated, false);
      }
      attachments.connect(containerId, NETWORK);
      connected = true;
      String ip = attachIfJoined(containerId, policy, false);
      if (ip == null) {
        throw new IOException("container " + containerId + " has no address on " + NETWORK + " after joining it");
      }
      return ip;
    } catch (IOException | RuntimeException e) {
      try {
        apply(target, EgressPolicy.DENY_ALL);
      } catch (IOException | RuntimeException again) {
        e.addSuppressed(again);
      }
      if (connected) {
        try {
          attachments.disconnect(containerId, NETWORK, true);
        } catch (RuntimeException again) {
          e.addSuppressed(again);
        }
      }
      throw e instanceof IOException io ? io : new IOException("joining " + NETWORK + " failed: " + e.getMessage(), e);
    }
  }

  /**
   * Puts a warm pool member already on the network (open mode) under its claimant's policy: the
   * gateway asks the new policy from now on, and the firewall is rewritten when the policy allows
   * more than deny-all.
   */
  public void rebind(@Nullable String ip, String containerId, Supplier<EgressPolicy> policy) throws IOException {
    if (ip == null) {
      throw new IOException("container " + containerId + " has no address on " + NETWORK);
    }
    holders.put(ip, containerId);
    proxy.register(ip, host -> policy.get());
    EgressPolicy now = policy.get();
    if (!now.equals(EgressPolicy.DENY_ALL)) {
      apply(containerId, now);
    }
  }

  /**
   * Takes the container's address out of the gateway and the host firewall, unless another
   * container holds that address by now (then its registration and entries stay).
   */
  public void detach(@Nullable String ip, @Nullable String containerId) {
    if (ip != null && containerId != null && holders.remove(ip, containerId)) {
      proxy.unregister(ip);
      enforcement.forget(ip);
    }
  }

  /**
   * Rewrites the container's firewall for the policy (a whole-table replace, so it is atomic), in
   * its namespace and, when it is on the sandbox network, on the host.
   */
  public void apply(String containerId, EgressPolicy policy) throws IOException {
    NetworkAttachments.Attachment info = attachments.attachment(containerId);
    apply(enforcement.target(containerId, info), policy);
    String ip = info.addresses().get(NETWORK);
    String port = ip == null ? null : enforcement.portOf(ip);
    if (port != null) {
      enforcement.enforce(ip, port, rulesFor(policy));
    }
  }

  /** The policy as the runtime enforces it, inside the sandbox and on the host. */
  EgressRules rulesFor(EgressPolicy policy) {
    return PolicyRules.enforced(policy, open, gateway.getHostAddress(), proxy.ports(), destinations.sandboxSubnets());
  }

  /** Writes the sandbox's own firewall for the policy (a whole-table replace, so it is atomic). */
  private void apply(EgressEnforcement.Target target, EgressPolicy policy) throws IOException {
    enforcement.applyInside(target, rulesFor(policy), open ? List.of() : destinations.hostAddressesV4());
  }

  @Override
  public void close() {
    enforcement.close();
    proxy.close();
    witnesses.forEach(Witnesses.Witness::close);
  }
}
