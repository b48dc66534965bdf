package io.sandboxes.examples.bench;

import io.sandboxes.EgressProbe;
import io.sandboxes.ExecResult;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.local.LocalServer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Measures the local runtime's egress: how long {@code verifyEgress} takes, and the gateway's
 * throughput against a direct connection (a 200 MB download from a host outside the sandboxes'
 * reach, made by the bench in a network namespace of its own, allowed by CIDR so both paths are
 * open). Needs root, iproute2 and python3, as egress itself does.
 *
 * <p>{@code scripts/run-examples.sh bench.EgressBench}
 */
public final class EgressBench {
  private static final int MB = 1024 * 1024;

  private EgressBench() {}

  public static void main(String[] args) throws Exception {
    try (LocalServer server = LocalServer.builder().build().start();
         SandboxClient client = Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey())) {
      E2BSandboxProvider provider = client.provider();
      if (!server.egressEnforced()) {
        System.out.println("egress is not enforced on this machine (needs root, nsenter, iptables); nothing to measure");
        return;
      }
      EgressProbe witnesses = server.egressProbe();
      List<Double> verify = new ArrayList<>();
      try (E2BSandboxProvider probing = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).sandboxUrl(server.sandboxUrl())
          .apiKey(server.apiKey()).egressProbe(witnesses).build()) {
        for (int i = 0; i < 5; i++) {
          long t0 = System.nanoTime();
          String state = probing.verifyEgress().state().name();
          verify.add((System.nanoTime() - t0) / 1e6);
          if (!state.equals("FILTERED")) {
            throw new IllegalStateException("verifyEgress said " + state);
          }
        }
      }
      try (Outside bulk = new Outside(); LiveSandbox s = provider.api().create()) {
        provider.api().updateNetwork(s.id(), List.of(bulk.address + "/32"), List.of("0.0.0.0/0"));
        String url = "http://" + bulk.address + ":8080/";
        List<Double> viaGateway = new ArrayList<>();
        List<Double> direct = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          viaGateway.add(speed(s, "curl -s -o /dev/null -w '%{speed_download}' " + url));
          direct.add(speed(s, "curl -s --noproxy '*' -o /dev/null -w '%{speed_download}' " + url));
        }
        System.out.printf("%-34s n=5  median %8.0f ms%n", "verifyEgress (local witnesses)", median(verify));
        System.out.printf("%-34s n=5  median %8.1f MB/s%n", "download through the gateway", median(viaGateway));
        System.out.printf("%-34s n=5  median %8.1f MB/s%n", "download direct (allowed CIDR)", median(direct));
        System.out.printf("%-34s %.0f%%%n", "gateway throughput vs direct", 100 * median(viaGateway) / median(direct));
      }
    }
  }

  /**
   * A host outside the sandboxes' reach but for an allow-list: a network namespace of the bench's
   * own on 198.18.0.0/15 (the benchmarking range), routed by this host, serving 200 MB per request.
   * The host's own addresses are out of every sandbox's reach, so the server cannot sit there.
   */
  private static final class Outside implements AutoCloseable {
    private static final String SERVE = """
        import socket, sys, threading
        data = b"x" * (200 * 1024 * 1024)
        head = b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(data)
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((sys.argv[1], 8080)); s.listen(16); print("ready", flush=True)
        def serve(c):
            try:
                c.recv(65536); c.sendall(head); c.sendall(data)
            finally:
                c.close()
        while True:
            c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
        """;
    final String address = "198.19.250.2";
    private final String ns = "sbxbench";
    private final Process server;

    Outside() throws Exception {
      sh("ip netns del " + ns + " 2>/dev/null; ip link del " + ns + "a 2>/dev/null; ip netns add " + ns
          + " && ip link add " + ns + "a type veth peer name " + ns + "b && ip link set " + ns + "b netns " + ns
          + " && ip addr add 198.19.250.1/30 dev " + ns + "a && ip link set " + ns + "a up"
          + " && ip netns exec " + ns + " ip addr add " + address + "/30 dev " + ns + "b"
          + " && ip netns exec " + ns + " ip link set " + ns + "b up && ip netns exec " + ns + " ip link set lo up"
          + " && ip netns exec " + ns + " ip route add default via 198.19.250.1");
      server = new ProcessBuilder("ip", "netns", "exec", ns, "python3", "-u", "-c", SERVE, address).redirectErrorStream(true).start();
      String first = new java.io.BufferedReader(new java.io.InputStreamReader(server.getInputStream())).readLine();
      if (!"ready".equals(first)) {
        close();
        throw new IllegalStateException("the outside host's server did not start: " + first);
      }
    }

    private static void sh(String command) throws Exception {
      Process p = new ProcessBuilder("sh", "-c", command).inheritIO().start();
      if (p.waitFor() != 0) {
        throw new IllegalStateException(command + " failed");
      }
    }

    @Override
    public void close() throws Exception {
      if (server != null) {
        server.destroyForcibly();
      }
      sh("ip netns del " + ns + " 2>/dev/null; ip link del " + ns + "a 2>/dev/null; true");
    }
  }

  private static double speed(LiveSandbox s, String command) {
    ExecResult r = s.exec(command);
    if (r.exitCode() != 0) {
      throw new IllegalStateException(command + " failed: " + r);
    }
    return Double.parseDouble(r.stdout().strip()) / MB;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }
}
