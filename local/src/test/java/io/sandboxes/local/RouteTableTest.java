package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The order of the server's routes, as the wire sees it: what is open and what needs a key, a
 * known path with the wrong method (405) against a path no route serves (501), and template paths
 * that built templates decline and base or snapshots answer; on envd, a call that is no POST and
 * one no table holds.
 */
@ExtendWith(SharedServer.class)
class RouteTableTest {

  private static HttpResponse<String> send(HttpClient http, URI base, String method, String path, @Nullable String key,
      String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).method(method, HttpRequest.BodyPublishers.noBody());
    if (key != null) {
      b.header("X-API-KEY", key);
    }
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void answers(HttpResponse<String> r, int status, String body) {
    assertThat(r.statusCode()).as(r.request().method() + " " + r.uri().getPath()).isEqualTo(status);
    assertThat(r.body()).as(r.request().method() + " " + r.uri().getPath()).isEqualTo(body);
  }

  private static String error(int status, String message) {
    return "{\"code\":" + status + ",\"message\":\"" + message.replace("\"", "\\\"") + "\"}";
  }

  @Test
  @DisplayName("control plane: health is open, the key comes before every route, 405 for a known path, 501 for none")
  void controlPlane(LocalServer server) throws Exception {
    URI api = server.apiUrl();
    String key = server.apiKey();
    try (HttpClient http = HttpClient.newHttpClient()) {
      assertThat(send(http, api, "GET", "/health", null).statusCode()).isEqualTo(204);
      answers(send(http, api, "GET", "/sandboxes", null), 401, error(401, "Missing API key (X-API-KEY header)"));
      answers(send(http, api, "GET", "/no/such/route", "wrong"), 401, error(401, "Invalid API key"));
      answers(send(http, api, "POST", "/health", key), 501, error(501, "not implemented by the local runtime: POST /health"));
      answers(send(http, api, "PATCH", "/sandboxes", key), 405, error(405, "method PATCH is not allowed on /sandboxes"));
      answers(send(http, api, "POST", "/sandboxes/nope", key), 405, error(405, "method POST is not allowed on /sandboxes/nope"));
      answers(send(http, api, "GET", "/sandboxes/nope", key), 404,
          error(404, "Sandbox \"nope\" doesn't exist or you don't have access to it"));
      answers(send(http, api, "GET", "/sandboxes/metrics", key), 501,
          error(501, "not implemented by the local runtime: GET /sandboxes/metrics"));
      answers(send(http, api, "GET", "/v2/sandboxes/nope", key), 501,
          error(501, "not implemented by the local runtime: GET /v2/sandboxes/nope"));
      answers(send(http, api, "GET", "/sandboxes/nope/connect", key), 501,
          error(501, "not implemented by the local runtime: GET /sandboxes/nope/connect"));
      answers(send(http, api, "PUT", "/volumes", key), 405, error(405, "method PUT is not allowed on /volumes"));
      answers(send(http, api, "PATCH", "/volumes/v1", key), 405, error(405, "method PATCH is not allowed on /volumes/v1"));
      answers(send(http, api, "GET", "/volumes/none-such", key), 404, error(404, "volume 'none-such' not found"));
      // a built template's routes decline base; the alias lookup then answers it, a template's page does not exist for it
      answers(send(http, api, "GET", "/templates/aliases/base", key), 200, "{\"templateID\":\"base\",\"public\":true}");
      answers(send(http, api, "GET", "/templates/base", key), 501, error(501, "not implemented by the local runtime: GET /templates/base"));
      answers(send(http, api, "GET", "/templates/none-such/tags", key), 404, error(404, "template 'none-such' not found"));
      answers(send(http, api, "GET", "/templates/aliases/none-such", key), 404, error(404, "template alias 'none-such' not found"));
    }
  }

  @Test
  @DisplayName("envd: a call needs POST (405), and a path no table holds is unimplemented")
  void envd(LocalServer server, E2BApi e2b) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient(); LiveSandbox sandbox = e2b.create()) {
      String[] headers = {"E2b-Sandbox-Id", sandbox.id(), "X-Access-Token", Tokens.envdToken(server, sandbox.id())};
      URI envd = server.sandboxUrl();
      answers(send(http, envd, "GET", "/process.Process/List", null, headers), 405,
          error(405, "method GET is not allowed on /process.Process/List"));
      HttpResponse<String> none = send(http, envd, "POST", "/process.Process/Nothing", null, headers);
      assertThat(none.statusCode()).isEqualTo(501);
      assertThat(none.body()).isEqualTo("{\"code\":\"unimplemented\",\"message\":\"not implemented by the local runtime: /process.Process/Nothing\"}");
      HttpResponse<String> list = send(http, envd, "POST", "/process.Process/List", null,
          "E2b-Sandbox-Id", sandbox.id(), "X-Access-Token", Tokens.envdToken(server, sandbox.id()), "Content-Type", "application/json");
      assertThat(list.statusCode()).isEqualTo(200);
      assertThat(list.body()).startsWith("{\"processes\":[");
    }
  }
}
