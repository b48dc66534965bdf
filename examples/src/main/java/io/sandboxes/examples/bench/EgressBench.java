package io.sandboxes.examples.bench;

import com.sun.net.httpserver.HttpServer;
import io.sandboxes.EgressProbe;
import io.sandboxes.ExecResult;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.local.LocalServer;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Measures the local runtime's egress: how long {@code verifyEgress} takes, and the gateway's
 * throughput against a direct connection (a 200 MB download from a server on the sandbox
 * network's gateway address, allowed by CIDR so both paths are open).
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
      String gateway = witnesses.rawIp().substring(0, witnesses.rawIp().indexOf(':'));
      byte[] chunk = new byte[MB];
      HttpServer bulk = HttpServer.create(new InetSocketAddress(InetAddress.getByName(gateway), 0), 10);
      bulk.createContext("/", ex -> {
        ex.sendResponseHeaders(200, 200L * MB);
        try (OutputStream out = ex.getResponseBody()) {
          for (int i = 0; i < 200; i++) {
            out.write(chunk);
          }
        }
      });
      bulk.start();
      try (LiveSandbox s = provider.api().create()) {
        provider.api().updateNetwork(s.id(), List.of(gateway + "/32"), List.of("0.0.0.0/0"));
        String url = "http://" + gateway + ":" + bulk.getAddress().getPort() + "/";
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
      } finally {
        bulk.stop(0);
      }
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
