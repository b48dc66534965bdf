package io.sandboxes.examples.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The exec figures of "warm when it matters" (issue 26) for the Java client: the round trip of
 * {@code exec("echo hi")} beside a raw {@code docker exec} of {@code bash -l -c 'echo hi'} in a
 * container of the same image, and the Java client's own cost per exec.
 *
 * <p>The server reports no time of its own for an exec (no timing header, no log line with a
 * duration; only a create logs {@code dockerMs}/{@code daemonMs}/{@code totalMs}), so the
 * server's time for the same call is taken from the outside: the same {@code process.Process/Start}
 * request sent by {@link BareEnvd}, prebuilt bytes on a kept-alive loopback socket, its answer read
 * to the end unparsed. Its round trip is the server's time plus the loopback; the Java client's
 * time minus it (per round, the calls interleaved in an order that turns each round, so load drift
 * and whatever one call leaves behind hit all alike) is what the client adds: request building, its
 * HTTP/1.1 transport (for a plain {@code http://} server, spoken on the caller's thread), Connect and
 * JSON parsing, its threads; its CPU and allocation on the caller's thread are printed beside it
 * (steadier than the difference of wall times on a loaded machine). The same request sent with a bare {@code java.net.http} client (body
 * read whole, no parsing), and again with the body as a stream whose Connect envelopes are parsed on
 * the caller's thread, shows what the JDK's own HTTP client would cost on its own: the client spoke
 * through it until its cost here (1.3-2.1 ms a call, in hand-offs between threads) was found larger
 * than the rest of the client's. The raw {@code docker exec}s run apart,
 * half before and half after: the engine stays busy a while after one returns, and the call that
 * followed it in a round was charged for that.
 *
 * <p>{@code scripts/run-examples.sh bench.ExecBench [rounds=200]}; {@code bench.ExecBench 20} is quick.
 * The official SDK's exec figure is in {@code bench.OfficialSdkBench}.
 */
public final class ExecBench {
  private ExecBench() {}

  /** Calls of each client before the measured rounds. */
  private static final int WARM_UP = 300;

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    try (Leftovers left = new Leftovers()) {
      DockerRuntime docker = left.keep(DockerRuntime.connect());
      LocalServer server = left.keep(LocalServer.builder().build().start());
      SandboxClient client = left.keep(Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey()));
      LiveSandbox s = left.keep(client.provider().api().create());
      Measure.Op raw = new RawDocker(docker, left.startRaw(docker)).echo();
      Measure.Op ours = () -> Measure.check(s.exec("echo hi").stdout().equals("hi\n"), "echo through the Java client");
      BareEnvd wire = left.keep(new BareEnvd(server.sandboxUrl(), s.id(), accessToken(server, s.id()), "echo hi"));
      Measure.Op bare = () -> {
        String answer = new String(wire.call(), StandardCharsets.ISO_8859_1);
        // "aGkK" is base64 of "hi\n"; the end event closes the process's stream
        Measure.check(answer.contains("\"aGkK\"") && answer.contains("\"end\""), "echo on the bare wire gave " + answer);
      };
      HttpClient jdkClient = left.keep(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());
      Measure.Op jdk = () -> {
        HttpResponse<byte[]> r = jdkClient.send(wire.httpRequest(), HttpResponse.BodyHandlers.ofByteArray());
        String answer = new String(r.body(), StandardCharsets.ISO_8859_1);
        Measure.check(r.statusCode() == 200 && answer.contains("\"aGkK\"") && answer.contains("\"end\""),
            "echo through java.net.http gave " + r.statusCode() + " " + answer);
      };
      ObjectMapper json = new ObjectMapper();
      Measure.Op jdkStream = () -> {
        // the body as a stream, each Connect envelope read and parsed on the caller's thread as it
        // comes: what the client does, less its threads, timers and result building
        HttpResponse<java.io.InputStream> r = jdkClient.send(wire.httpRequest(), HttpResponse.BodyHandlers.ofInputStream());
        boolean ended = false;
        boolean echoed = false;
        try (java.io.DataInputStream in = new java.io.DataInputStream(r.body())) {
          while (true) {
            int flags = in.read();
            if (flags < 0) {
              break;
            }
            byte[] payload = new byte[in.readInt()];
            in.readFully(payload);
            JsonNode event = json.readTree(payload).path("event");
            echoed |= event.path("data").path("stdout").asText().equals("aGkK");
            ended |= event.has("end");
          }
        }
        Measure.check(r.statusCode() == 200 && echoed && ended, "echo through java.net.http as a stream");
      };
      for (int i = 0; i < 10; i++) {
        raw.run();
      }
      // the clients warmed up as a long-running program finds them: their paths compiled by the JIT
      // (after ten calls the Java client's CPU per exec was still about four times its later figure)
      for (int i = 0; i < WARM_UP; i++) {
        ours.run();
        bare.run();
        jdk.run();
        jdkStream.run();
      }
      // raw apart from ours: a docker exec leaves the engine busy for a while after it returns,
      // and whatever ran next in the same round was charged for it (the client's own cost once
      // read 8.6 ms that way; in the slot after raw the bare wire is as slow). Half the raw rounds
      // before, half after, so a drift in load reaches both sides
      List<Double> rawMs = new ArrayList<>();
      for (int i = 0; i < rounds / 2; i++) {
        rawMs.add(time(raw));
      }
      List<Measure.Op> ops = List.of(ours, bare, jdk, jdkStream);
      List<List<Double>> ms = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
      List<Double> ownMs = new ArrayList<>();
      List<Double> jdkMs = new ArrayList<>();
      List<Double> jdkStreamMs = new ArrayList<>();
      // the Java client's own work on the caller's thread (its exec reads the answer there): CPU and
      // allocation per call, which a loaded machine disturbs far less than the wall-clock difference
      java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
      com.sun.management.ThreadMXBean hotspot = threads instanceof com.sun.management.ThreadMXBean h ? h : null;
      List<Double> callerCpuMs = new ArrayList<>();
      List<Double> callerKb = new ArrayList<>();
      for (int i = -1; i < rounds; i++) {
        double[] t = new double[ops.size()];
        long cpu = 0;
        long bytes = 0;
        for (int k = 0; k < ops.size(); k++) {
          // each round in another order: no call always follows the same one
          int op = (k + Math.max(i, 0)) % ops.size();
          long cpu0 = op == 0 ? threads.getCurrentThreadCpuTime() : 0;
          long bytes0 = op == 0 && hotspot != null ? hotspot.getCurrentThreadAllocatedBytes() : 0;
          t[op] = time(ops.get(op));
          if (op == 0) {
            cpu = threads.getCurrentThreadCpuTime() - cpu0;
            bytes = hotspot != null ? hotspot.getCurrentThreadAllocatedBytes() - bytes0 : 0;
          }
        }
        if (i < 0) {
          continue; // the round right after the raw ones is theirs
        }
        callerCpuMs.add(cpu / 1e6);
        callerKb.add(bytes / 1024.0);
        for (int k = 0; k < ops.size(); k++) {
          ms.get(k).add(t[k]);
        }
        ownMs.add(t[0] - t[1]);
        jdkMs.add(t[2] - t[1]);
        jdkStreamMs.add(t[3] - t[1]);
      }
      for (int i = rounds / 2; i < rounds; i++) {
        rawMs.add(time(raw));
      }
      List<Double> javaMs = ms.get(0);
      List<Double> bareMs = ms.get(1);
      double rawMedian = Measure.median(rawMs);
      System.out.printf("%nmachine: %d cores, load average %.2f; %d rounds%n", Runtime.getRuntime().availableProcessors(),
          java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), rounds);
      Measure.targetHeader("ours");
      Measure.row("exec echo, Java client, median (ms; raw exec bash -l -c)", rawMedian, Measure.median(javaMs), "<= 0.12x raw");
      Measure.row("exec echo, Java client, p95 (ms; raw p95)", Measure.percentile(rawMs, 95), Measure.percentile(javaMs, 95), "");
      Measure.row("exec echo, bare wire = server's time, median (ms; raw)", rawMedian, Measure.median(bareMs), "");
      Measure.oursOnly("Java client's own cost per exec, median (ms)", Measure.median(ownMs), "<= 0.5 ms");
      Measure.oursOnly("  the Java client's CPU on the caller's thread per exec, median (ms)", Measure.median(callerCpuMs), "");
      if (hotspot != null) {
        Measure.oursOnly("  allocated on the caller's thread per exec, median (KB)", Measure.median(callerKb), "");
      }
      Measure.oursOnly("  java.net.http alone, same request, over the bare wire, median (ms)", Measure.median(jdkMs), "");
      Measure.oursOnly("  java.net.http, body streamed and parsed inline, over it, median (ms)", Measure.median(jdkStreamMs), "");
    }
  }

  /** The sandbox's envd access token, from the API's connect call (the client keeps it to itself). */
  private static String accessToken(LocalServer server, String sandboxId) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId + "/connect"))
          .header("X-API-Key", server.apiKey()).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"timeout\": 600}")).build(), HttpResponse.BodyHandlers.ofString());
      JsonNode body = new ObjectMapper().readTree(r.body());
      Measure.check(r.statusCode() / 100 == 2 && body.hasNonNull("envdAccessToken"), "connect answered " + r.statusCode() + ": " + r.body());
      return body.get("envdAccessToken").asText();
    }
  }

  private static double time(Measure.Op op) throws Exception {
    long t = System.nanoTime();
    op.run();
    return (System.nanoTime() - t) / 1e6;
  }
}
