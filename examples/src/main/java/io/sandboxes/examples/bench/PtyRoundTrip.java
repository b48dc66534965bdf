package io.sandboxes.examples.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.e2b.internal.ConnectStream;
import io.sandboxes.e2b.internal.Envd;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Time from a keystroke sent to a PTY to its echo coming back, at the protocol level: the public
 * API has no PTY yet, so this benchmark speaks envd's RPCs through the client's internal transport.
 */
final class PtyRoundTrip {
  private PtyRoundTrip() {}

  static List<Double> measure(E2BSandboxProvider provider, String apiKey, LiveSandbox sandbox, int rounds) throws Exception {
    String token = token(provider, apiKey, sandbox);
    List<Double> out = new ArrayList<>();
    try (Http http = new Http(Duration.ofSeconds(30))) {
      Envd envd = new Envd(http, provider.sandboxUrl().orElseThrow(), sandbox.id(), token);
      ObjectNode req = Json.object();
      ObjectNode process = req.putObject("process").put("cmd", "/bin/cat");
      process.putArray("args");
      req.putObject("pty").putObject("size").put("cols", 80).put("rows", 24);
      LinkedBlockingQueue<String> echoes = new LinkedBlockingQueue<>();
      try (ConnectStream stream = envd.stream("process.Process/Start", req, null, Duration.ofSeconds(120), "pty bench", null)) {
        int pid = stream.next().path("event").path("start").path("pid").asInt();
        Thread reader = Thread.ofVirtual().start(() -> {
          try {
            JsonNode msg;
            while ((msg = stream.next()) != null) {
              JsonNode data = msg.path("event").path("data").path("pty");
              if (!data.isMissingNode()) {
                echoes.add(new String(Base64.getDecoder().decode(data.asText()), StandardCharsets.UTF_8));
              }
            }
          } catch (RuntimeException closed) {
            // the benchmark closes the stream when done
          }
        });
        for (int i = 0; i < rounds; i++) {
          String key = Character.toString('a' + (i % 26));
          ObjectNode input = Json.object();
          input.putObject("process").put("pid", pid);
          input.putObject("input").put("pty", Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8)));
          long t0 = System.nanoTime();
          envd.unary("process.Process/SendInput", input, null, "key");
          String echo = echoes.poll(10, TimeUnit.SECONDS);
          if (echo == null || !echo.contains(key)) {
            throw new IllegalStateException("no echo of '" + key + "' (got " + echo + ")");
          }
          out.add((System.nanoTime() - t0) / 1_000_000.0);
        }
        ObjectNode kill = Json.object();
        kill.putObject("process").put("pid", pid);
        kill.put("signal", "SIGNAL_SIGKILL");
        envd.unary("process.Process/SendSignal", kill, null, "kill");
        reader.join(Duration.ofSeconds(10));
      }
    }
    return out;
  }

  private static String token(E2BSandboxProvider provider, String key, LiveSandbox sandbox) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      URI info = provider.apiUrl().resolve("/sandboxes/" + sandbox.id());
      HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(info).header("X-API-KEY", key).GET().build(),
          HttpResponse.BodyHandlers.ofByteArray());
      return Json.requireText(Json.parse(r.body()), "envdAccessToken");
    }
  }
}
