package io.sandboxes.local.internal.docker.firewall;

import io.sandboxes.local.internal.common.Ipv4;
import io.sandboxes.local.internal.host.HostTools;
import io.sandboxes.local.internal.runtime.EgressRules;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The half of egress enforcement a sandbox cannot reach: chains in the host's own firewall, for
 * every packet that comes in from a bridge the server made, whether it is for the host itself
 * (INPUT) or routed on (FORWARD, through Docker's {@code DOCKER-USER}).
 *
 * <p>Each bridge's packets go to a dispatch chain. A sandbox is known there by its address <em>and</em>
 * the bridge port (its veth) the packet came in on, so a sandbox that forged another's address
 * would still be judged as itself, or not at all; the dispatch goes to the sandbox's own chain
 * ({@code SBX-<address in hex>}, {@link IptablesRules}), and anything from the bridge that matches
 * no sandbox is dropped. Allowed packets return to the host's own rules (Docker's isolation
 * and NAT still apply); refused ones are dropped.
 *
 * <p>Several servers on one host share the chains: each inserts and removes only its own
 * sandboxes' entries; entries whose bridge port no longer exists (a server that died) are swept
 * when a server starts. Every change is one {@code iptables-restore --noflush} batch, applied
 * atomically.
 */
final class HostFirewall {
  private static final Logger LOG = LoggerFactory.getLogger(HostFirewall.class);
  static final String INPUT_DISPATCH = "SANDBOXES-IN";
  static final String FORWARD_DISPATCH = "SANDBOXES-FWD";
  private static final Pattern ENTRY = Pattern.compile(
      "^-A (SANDBOXES-IN|SANDBOXES-FWD) -s (\\S+)/32 -m physdev --physdev-in (\\S+) -g (SBX-[0-9A-F]{8})$");
  private static final Pattern SBX_CHAIN = Pattern.compile("^-N (SBX-[0-9A-F]{8})$");

  private final String forwardHook;
  /** What this server put in the host's firewall, to write again should it be flushed from outside. */
  private final Set<String> guarded = ConcurrentHashMap.newKeySet();
  private final Map<String, Shared> shared = new ConcurrentHashMap<>();
  private final Map<String, Own> own = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** A sandbox this server enforces: its bridge port and its rules. */
  private record Own(String veth, List<EgressRules.Rule> rules) {}

  /** A bridge whose containers share one chain. */
  private record Shared(String chain, List<EgressRules.Rule> rules) {}

  private HostFirewall(String forwardHook) {
    this.forwardHook = forwardHook;
  }

  /**
   * Makes the dispatch chains (when missing) and checks that bridged packets reach iptables.
   *
   * @throws IOException when the host's firewall cannot be written (no iptables, not root)
   */
  static HostFirewall start() throws IOException {
    bridgedPacketsFiltered();
    String forwardHook = iptables(List.of("-S", "DOCKER-USER")).ok() ? "DOCKER-USER" : "FORWARD";
    dispatchChains();
    HostFirewall firewall = new HostFirewall(forwardHook);
    firewall.sweep();
    return firewall;
  }

  /** Makes the dispatch chains, each ending in a drop, where they are missing. */
  private static void dispatchChains() throws IOException {
    for (String chain : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
      if (!iptables(List.of("-S", chain)).ok()) {
        iptables(List.of("-N", chain)); // another server may have made it meanwhile: then this fails, harmlessly
      }
      if (!iptables(List.of("-C", chain, "-j", "DROP")).ok()) {
        check(List.of("-A", chain, "-j", "DROP"), "ending " + chain + " with a drop");
      }
    }
  }

  /** @return the bridge port of the sandbox at {@code ip} this server enforces, or null */
  @Nullable String portOf(String ip) {
    Own o = own.get(ip);
    return o == null ? null : o.veth();
  }

  /**
   * Sends every packet that comes in from {@code bridge} through the dispatch chains (idempotent),
   * and drops its IPv6 packets outright where ip6tables exists (sandboxes have IPv6 disabled).
   */
  void guard(String bridge) throws IOException {
    guarded.add(bridge);
    hook("INPUT", bridge, INPUT_DISPATCH);
    hook(forwardHook, bridge, FORWARD_DISPATCH);
    if (HostTools.find("ip6tables") != null) {
      for (String chain : List.of("INPUT", "FORWARD")) {
        List<String> rule = List.of(chain, "-i", bridge, "-j", "DROP");
        if (!run("ip6tables", concat("-C", rule)).ok()) {
          HostTools.Result r = run("ip6tables", concat("-I", rule));
          if (!r.ok()) {
            LOG.debug("ip6tables refused a drop for {}: {}", bridge, r.output().strip());
          }
        }
      }
    }
  }

  private void hook(String chain, String bridge, String target) throws IOException {
    List<String> rule = List.of(chain, "-i", bridge, "-j", target);
    if (!iptables(concat("-C", rule)).ok()) {
      List<String> insert = new ArrayList<>(List.of("-I", chain, "1"));
      insert.addAll(rule.subList(1, rule.size()));
      check(insert, "sending " + bridge + "'s packets through " + target);
    }
  }

  /** The name of the chain that holds the sandbox at {@code ip}'s policy. */
  static String chainOf(String ip) {
    long v = Ipv4.parse(ip);
    if (v < 0) {
      throw new IllegalArgumentException("not an IPv4 address: " + ip);
    }
    return "SBX-" + String.format(Locale.ROOT, "%08X", v);
  }

  /**
   * Puts the sandbox at {@code ip}, on bridge port {@code veth}, under {@code rules}: its chain is
   * written anew and, unless this server dispatches to it on that port already, both hooks
   * dispatch to it (an entry of this server's for the address on another port goes). One batch,
   * no listing: an entry another server left for the address matches nothing (its port is gone)
   * and is swept at the next start.
   */
  void enforce(String ip, String veth, List<EgressRules.Rule> rules) throws IOException {
    Own before = own.put(ip, new Own(veth, List.copyOf(rules)));
    if (before != null && !before.veth().equals(veth)) {
      forgetEntries(ip, before.veth());
    }
    boolean dispatched = before != null && before.veth().equals(veth);
    if (!tryRestore(sandboxBatch(ip, veth, rules, dispatched))) {
      repair();
      restore(sandboxBatch(ip, veth, rules, dispatched), "writing the host firewall for sandbox address " + ip);
    }
  }

  static String sandboxBatch(String ip, String veth, List<EgressRules.Rule> rules, boolean dispatched) {
    String chain = chainOf(ip);
    StringBuilder batch = new StringBuilder("*filter\n:").append(chain).append(" - [0:0]\n");
    batch.append(IptablesRules.onHost(rules, chain, "RETURN", "DROP"));
    if (!dispatched) {
      for (String dispatch : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
        batch.append("-I ").append(dispatch).append(" 1").append(entry(dispatch, ip, veth, chain).substring(("-A " + dispatch).length()))
            .append('\n');
      }
    }
    return batch.append("COMMIT\n").toString();
  }

  /**
   * Writes again what this server keeps in the host's firewall, after something outside it (a
   * firewall reload, an {@code iptables -F}) took it away: the dispatch chains, the hooks, the
   * shared chains and this server's sandboxes' chains and entries. Until then their packets meet
   * no dispatch (they go nowhere, or, with the hooks gone too, only the namespace's firewall holds).
   */
  private synchronized void repair() throws IOException {
    LOG.warn("the host firewall's sandbox chains were changed from outside; writing them again");
    dispatchChains();
    for (String bridge : guarded) {
      guard(bridge);
    }
    for (Map.Entry<String, Shared> e : shared.entrySet()) {
      shared(e.getKey(), e.getValue().chain(), e.getValue().rules());
    }
    Set<String> listed = new HashSet<>(entries());
    for (Map.Entry<String, Own> e : own.entrySet()) {
      String ip = e.getKey();
      String veth = e.getValue().veth();
      String chain = chainOf(ip);
      StringBuilder batch = new StringBuilder("*filter\n:").append(chain).append(" - [0:0]\n");
      batch.append(IptablesRules.onHost(e.getValue().rules(), chain, "RETURN", "DROP"));
      for (String dispatch : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
        String wanted = entry(dispatch, ip, veth, chain);
        if (!listed.contains(wanted)) {
          batch.append("-I ").append(dispatch).append(" 1").append(wanted.substring(("-A " + dispatch).length())).append('\n');
        }
      }
      tryRestore(batch.append("COMMIT\n").toString());
    }
  }

  /**
   * Whether everything this server keeps in the host's firewall is still there: the hooks of its
   * bridges, the dispatch chains' final drop, the shared chains' dispatch and its sandboxes'
   * entries. One listing of the filter table.
   */
  boolean intact() throws IOException {
    Set<String> lines = new HashSet<>();
    for (String line : check(List.of("-S"), "listing the host firewall").split("\n")) {
      lines.add(line.strip());
    }
    for (String dispatch : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
      if (!lines.contains("-A " + dispatch + " -j DROP")) {
        return false;
      }
    }
    for (String bridge : guarded) {
      if (!lines.contains("-A INPUT -i " + bridge + " -j " + INPUT_DISPATCH)
          || !lines.contains("-A " + forwardHook + " -i " + bridge + " -j " + FORWARD_DISPATCH)) {
        return false;
      }
    }
    for (Map.Entry<String, Shared> e : shared.entrySet()) {
      if (!lines.contains("-A " + INPUT_DISPATCH + " -i " + e.getKey() + " -g " + e.getValue().chain())) {
        return false;
      }
    }
    for (Map.Entry<String, Own> e : own.entrySet()) {
      for (String dispatch : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
        if (!lines.contains(entry(dispatch, e.getKey(), e.getValue().veth(), chainOf(e.getKey())))) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Looks every {@code interval} whether the host's firewall still holds what this server put
   * there, and writes it again when not (a firewall reload, another tool flushing chains), until
   * {@link #close}. A sandbox's packets meet no dispatch in between, and are dropped.
   */
  void watch(java.time.Duration interval) {
    Thread.ofVirtual().name("sandboxes-host-firewall-watch").start(() -> {
      while (!closed) {
        try {
          Thread.sleep(interval);
          if (!closed && !intact()) {
            repair();
          }
        } catch (InterruptedException e) {
          return;
        } catch (IOException | RuntimeException e) {
          LOG.debug("checking the host firewall failed: {}", e.toString());
        }
      }
    });
  }

  /** Stops {@link #watch}ing. What this server wrote stays: its kept sandboxes stay enforced. */
  void close() {
    closed = true;
  }

  /** Applies a batch, atomically, failing with {@code what} when it cannot (see {@link #tryRestore}). */
  private static void restore(String batch, String what) throws IOException {
    for (int attempt = 1; ; attempt++) {
      HostTools.Result r = HostTools.run("iptables-restore", List.of("--noflush", "-w", "10"), batch);
      if (r.ok()) {
        return;
      }
      if (attempt == 3) {
        throw new IOException(what + " failed: " + r.output().strip());
      }
      pause(attempt);
    }
  }

  /**
   * Applies a batch, atomically, trying it up to three times: another process changing the
   * firewall at the same moment can make the kernel refuse a batch that is fine a moment later.
   *
   * @return whether it was applied
   */
  private static boolean tryRestore(String batch) throws IOException {
    try {
      restore(batch, "a host firewall batch");
      return true;
    } catch (IOException e) {
      LOG.debug("{}", e.getMessage());
      return false;
    }
  }

  private static void pause(int attempt) throws IOException {
    try {
      Thread.sleep(50L * attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing the host firewall", e);
    }
  }

  /**
   * Puts every container on {@code bridge} under the same {@code rules}, in {@code chain}: for a
   * network whose containers all share one policy (template builds), where no container's
   * address needs telling apart.
   */
  void shared(String bridge, String chain, List<EgressRules.Rule> rules) throws IOException {
    shared.put(bridge, new Shared(chain, List.copyOf(rules)));
    StringBuilder batch = new StringBuilder("*filter\n:").append(chain).append(" - [0:0]\n");
    batch.append(IptablesRules.onHost(rules, chain, "RETURN", "DROP"));
    for (String dispatch : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
      if (!iptables(List.of("-C", dispatch, "-i", bridge, "-g", chain)).ok()) {
        batch.append("-I ").append(dispatch).append(" 1 -i ").append(bridge).append(" -g ").append(chain).append('\n');
      }
    }
    batch.append("COMMIT\n");
    restore(batch.toString(), "writing " + chain);
  }

  /** Takes the sandbox at {@code ip} out, when this server enforces it: its dispatch entries and its chain go. */
  void forget(String ip) {
    Own o = own.remove(ip);
    if (o != null) {
      forgetEntries(ip, o.veth());
    }
  }

  private void forgetEntries(String ip, String veth) {
    String chain = chainOf(ip);
    StringBuilder batch = new StringBuilder("*filter\n");
    try {
      boolean referenced = false;
      for (String e : entries()) {
        Matcher m = ENTRY.matcher(e);
        if (!m.matches() || !m.group(4).equals(chain)) {
          continue;
        }
        if (m.group(3).equals(veth)) {
          batch.append("-D").append(e.substring(2)).append('\n');
        } else {
          referenced = true; // the address is another sandbox's now
        }
      }
      if (!referenced && iptables(List.of("-S", chain)).ok()) {
        batch.append("-F ").append(chain).append('\n').append("-X ").append(chain).append('\n');
      }
      batch.append("COMMIT\n");
      HostTools.Result r = HostTools.run("iptables-restore", List.of("--noflush", "-w", "10"), batch.toString());
      if (!r.ok()) {
        LOG.debug("removing the host firewall of {} failed (swept at the next start): {}", ip, r.output().strip());
      }
    } catch (IOException e) {
      LOG.debug("removing the host firewall of {} failed (swept at the next start): {}", ip, e.toString());
    }
  }

  /**
   * Removes dispatch entries whose bridge port is gone (their sandboxes ended while no server
   * watched) and second copies of an entry (a server that took its sandboxes back after a
   * restart dispatches to them again), and sandbox chains nothing dispatches to.
   */
  void sweep() {
    try {
      StringBuilder batch = new StringBuilder("*filter\n");
      Set<String> referenced = new HashSet<>();
      Set<String> seen = new HashSet<>();
      for (String e : entries()) {
        Matcher m = ENTRY.matcher(e);
        if (!m.matches()) {
          continue;
        }
        if (Files.exists(Path.of("/sys/class/net", m.group(3))) && seen.add(e)) {
          referenced.add(m.group(4));
        } else {
          batch.append("-D").append(e.substring(2)).append('\n');
        }
      }
      for (String line : iptables(List.of("-S")).output().split("\n")) {
        Matcher m = SBX_CHAIN.matcher(line.strip());
        if (m.matches() && !referenced.contains(m.group(1))) {
          batch.append("-F ").append(m.group(1)).append('\n').append("-X ").append(m.group(1)).append('\n');
        }
      }
      batch.append("COMMIT\n");
      HostTools.Result r = HostTools.run("iptables-restore", List.of("--noflush", "-w", "10"), batch.toString());
      if (!r.ok()) {
        LOG.debug("sweeping the host firewall failed: {}", r.output().strip());
      }
    } catch (IOException e) {
      LOG.debug("sweeping the host firewall failed: {}", e.toString());
    }
  }

  private static String entry(String dispatch, String ip, String veth, String chain) {
    return "-A " + dispatch + " -s " + ip + "/32 -m physdev --physdev-in " + veth + " -g " + chain;
  }

  /** The dispatch chains' entries, as {@code iptables -S} prints them. */
  private static List<String> entries() throws IOException {
    List<String> lines = new ArrayList<>();
    for (String dispatch : List.of(INPUT_DISPATCH, FORWARD_DISPATCH)) {
      for (String line : check(List.of("-S", dispatch), "listing " + dispatch).split("\n")) {
        if (line.startsWith("-A ")) {
          lines.add(line.strip());
        }
      }
    }
    return lines;
  }

  /**
   * Bridged packets reach iptables only with {@code br_netfilter} and
   * {@code net.bridge.bridge-nf-call-iptables=1}; without them the bridge-port match never holds
   * and every sandbox would lose its network. Docker turns them on for networks without
   * inter-container traffic; here they are made sure of.
   */
  private static void bridgedPacketsFiltered() throws IOException {
    Path knob = Path.of("/proc/sys/net/bridge/bridge-nf-call-iptables");
    if (!Files.exists(knob)) {
      HostTools.run("modprobe", List.of("br_netfilter"), null);
    }
    if (!Files.exists(knob)) {
      throw new IOException("the kernel's br_netfilter is not loaded (modprobe br_netfilter), so bridged packets cannot be filtered");
    }
    if (!Files.readString(knob).strip().equals("1")) {
      Files.writeString(knob, "1");
    }
  }

  private static HostTools.Result iptables(List<String> args) throws IOException {
    return run("iptables", args);
  }

  private static HostTools.Result run(String tool, List<String> args) throws IOException {
    List<String> all = new ArrayList<>(List.of("-w", "10"));
    all.addAll(args);
    return HostTools.run(tool, all, null);
  }

  private static String check(List<String> args, String what) throws IOException {
    HostTools.Result r = iptables(args);
    if (!r.ok()) {
      throw new IOException(what + " failed: " + r.output().strip());
    }
    return r.output();
  }

  private static List<String> concat(String op, List<String> rule) {
    List<String> all = new ArrayList<>();
    all.add(op);
    all.addAll(rule);
    return all;
  }
}
