package io.sandboxes.local;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A host "on the internet" for egress tests, made by the test on this machine: a network
 * namespace of its own, joined to the host by a veth pair on a /30 in 198.18.0.0/15 (the range
 * set aside for benchmarking, neither private nor anyone's), routed by the host like any outside
 * address, with an HTTP responder in it that counts who connected. Nothing here leaves this
 * machine. Needs root, iproute2 and python3 on the host.
 */
final class ExternalHost implements AutoCloseable {
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Answers every connection with 200 and "external", printing one line per connection first. */
  private static final String RESPONDER = """
      import socket, sys, threading
      s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
      s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(128)
      print("ready", flush=True)
      def serve(c, peer):
          print("conn " + peer[0], flush=True)
          try:
              c.settimeout(5); c.recv(65536)
              c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 9\\r\\nConnection: close\\r\\n\\r\\nexternal\\n")
          except Exception:
              pass
          c.close()
      while True:
          c, peer = s.accept()
          threading.Thread(target=serve, args=(c, peer), daemon=True).start()
      """;

  private final String ns;
  private final String hostSide;
  private final String address;
  private final int port = 8080;
  private final Process responder;
  final List<String> connections = new CopyOnWriteArrayList<>();

  ExternalHost() throws IOException, InterruptedException {
    String tag = Integer.toHexString(0x100000 + RANDOM.nextInt(0xEFFFFF));
    ns = "sbxt" + tag;
    hostSide = "sbxt" + tag + "a";
    long base = (198L << 24) | (18L << 16) | (4L * (1 + RANDOM.nextInt(32_000)));
    String host = dotted(base + 1);
    address = dotted(base + 2);
    sh("ip netns add " + ns);
    try {
      sh("ip link add " + hostSide + " type veth peer name " + ns + "b");
      sh("ip link set " + ns + "b netns " + ns);
      sh("ip addr add " + host + "/30 dev " + hostSide);
      sh("ip link set " + hostSide + " up");
      sh("ip netns exec " + ns + " ip addr add " + address + "/30 dev " + ns + "b");
      sh("ip netns exec " + ns + " ip link set " + ns + "b up");
      sh("ip netns exec " + ns + " ip link set lo up");
      sh("ip netns exec " + ns + " ip route add default via " + host);
      sh("ip netns exec " + ns + " iptables -w 10 -A INPUT -p tcp --dport " + port); // counts every packet for the responder
      responder = new ProcessBuilder("ip", "netns", "exec", ns, "python3", "-u", "-c", RESPONDER, address, Integer.toString(port))
          .redirectErrorStream(true).start();
      BufferedReader out = new BufferedReader(new InputStreamReader(responder.getInputStream(), StandardCharsets.UTF_8));
      String first = out.readLine();
      if (!"ready".equals(first)) {
        throw new IOException("the external host's responder did not start: " + first);
      }
      Thread.ofVirtual().start(() -> {
        try {
          String line;
          while ((line = out.readLine()) != null) {
            if (line.startsWith("conn ")) {
              connections.add(line.substring(5));
            }
          }
        } catch (IOException ignored) {
          // closed
        }
      });
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  private final List<Process> programs = new CopyOnWriteArrayList<>();

  /**
   * Runs a further Python program in the outside host's namespace (another service of that host),
   * stopped at {@link #close()}. It must print {@code ready} once it listens.
   *
   * @return every line it prints after that, as it prints them
   */
  List<String> run(String program, String... args) throws IOException {
    List<String> command = new java.util.ArrayList<>(List.of("ip", "netns", "exec", ns, "python3", "-u", "-c", program));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    programs.add(p);
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String first = out.readLine();
    if (!"ready".equals(first)) {
      throw new IOException("a program in the outside host did not start: " + first);
    }
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread.ofVirtual().start(() -> {
      try {
        String line;
        while ((line = out.readLine()) != null) {
          lines.add(line);
        }
      } catch (IOException ignored) {
        // closed
      }
    });
    return lines;
  }

  /** @return how many packets arrived for the responder's port (whether or not a connection came of them) */
  int packets() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("ip", "netns", "exec", ns, "iptables", "-w", "10", "-L", "INPUT", "-n", "-v", "-x")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    for (String line : out.split("\n")) {
      String[] f = line.strip().split("\\s+");
      if (f.length > 2 && f[0].matches("\\d+") && line.contains("dpt:" + port)) {
        return Integer.parseInt(f[0]);
      }
    }
    throw new IOException("no packet count in: " + out);
  }

  /** @return the external host's address */
  String address() {
    return address;
  }

  /** @return {@code http://address:port/} */
  String url() {
    return "http://" + address + ":" + port + "/";
  }

  String hostPort() {
    return address + "/" + port;
  }

  private static String dotted(long v) {
    return ((v >>> 24) & 0xff) + "." + ((v >>> 16) & 0xff) + "." + ((v >>> 8) & 0xff) + "." + (v & 0xff);
  }

  private static void sh(String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(command + " failed: " + out.strip());
    }
  }

  @Override
  public void close() {
    if (responder != null) {
      responder.destroyForcibly();
    }
    programs.forEach(Process::destroyForcibly);
    try {
      sh("ip netns del " + ns + " 2>/dev/null; ip link del " + hostSide + " 2>/dev/null; true");
    } catch (IOException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
