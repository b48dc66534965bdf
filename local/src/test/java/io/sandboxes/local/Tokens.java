package io.sandboxes.local;

import io.sandboxes.e2b.internal.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Reads a sandbox's envd access token from the control plane, as a second client would. */
public final class Tokens {
  private Tokens() {}

  public static String envdToken(LocalServer server, String sandboxId) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(server.apiUrl().resolve("/sandboxes/" + sandboxId))
          .header("X-API-KEY", server.apiKey()).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
      if (r.statusCode() != 200) {
        throw new IllegalStateException("GET /sandboxes/" + sandboxId + " answered " + r.statusCode());
      }
      return Json.requireText(Json.parse(r.body()), "envdAccessToken");
    }
  }
}
