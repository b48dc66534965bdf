package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fields of E2B's create and network bodies the local runtime cannot honour are refused with a
 * 400 naming them, never accepted and ignored; a field that asks for nothing passes.
 */
@ExtendWith(SharedServer.class)
class UnservedFieldsTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("create: iam, mcp, secure:false and httpsPorts are refused naming the field; a maskRequestHost that is no Host's text is refused")
  void createRefuses(LocalServer server) throws Exception {
    refused(server, "POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"iam\":{\"tokens\":{\"aws\":{\"audience\":\"sts\",\"tokenType\":\"JWT-SVID\"}}}}",
        "'iam' is not supported by the local runtime: workload identity tokens are minted by E2B's cloud");
    refused(server, "POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"mcp\":{\"github\":{}}}", "'mcp' is not supported by the local runtime");
    refused(server, "POST", "/sandboxes", "{\"templateID\":\"base\",\"secure\":false}", "'secure' is not supported by the local runtime");
    refused(server, "POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"a b.example.com\"}}",
        "'maskRequestHost' must be a Host header's text");
    refused(server, "POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":7}}",
        "'maskRequestHost' must be a Host header's text");
    refused(server, "POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"network\":{\"httpsPorts\":[3000]}}",
        "'httpsPorts' is not supported by the local runtime");
    // asking for nothing passes: the create gets as far as the template
    HttpResponse<String> none = call(server, "POST", "/v2/sandboxes", "{\"templateID\":\"no-such-template\",\"iam\":{},\"mcp\":null,"
        + "\"secure\":true,\"network\":{\"httpsPorts\":[],\"maskRequestHost\":null,\"rules\":{}}}");
    assertThat(none.statusCode()).as(none.body()).isEqualTo(404);
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("through the Java client: rules naming a missing secret on update are refused; the network is unchanged")
  void javaClient(LocalServer server, E2BApi api) throws Exception {
    try (LiveSandbox s = api.create()) {
      refused(server, "PUT", "/sandboxes/" + s.id() + "/network", "{\"httpsPorts\":[8443]}", "'httpsPorts' is not supported");
      assertThatThrownBy(() -> api.updateNetwork(s.id(), SandboxNetwork.allowOnly("1.2.3.4").withRule("api.example.com",
          java.util.Map.of("X-Key", "${e2b.secrets.no-such-secret-here}")))).isInstanceOfSatisfying(SandboxApiException.class,
              e -> assertThat(e.serverMessage()).startsWith("'rules' fill in secret 'no-such-secret-here', which does not exist"));
      assertThat(s.info().network() == null || s.info().network().allowOut().isEmpty()).as("the refused update changed nothing").isTrue();
    }
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  @DisplayName("a template build's minFreeDiskMb is served up to the disk each sandbox has, refused past it or malformed")
  void minFreeDisk(LocalServer server) throws Exception {
    String name = "min-free-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    refused(server, "POST", "/v3/templates", "{\"name\":\"" + name + "\",\"minFreeDiskMb\":10241}",
        "'minFreeDiskMb' of 10241 MiB is more than the local runtime gives a sandbox: each has 10240 MiB");
    refused(server, "POST", "/v3/templates", "{\"name\":\"" + name + "\",\"minFreeDiskMb\":-1}", "'minFreeDiskMb' must not be negative");
    refused(server, "POST", "/v3/templates", "{\"name\":\"" + name + "\",\"minFreeDiskMb\":\"big\"}",
        "'minFreeDiskMb' must be a whole number of MiB");
    HttpResponse<String> ok = call(server, "POST", "/v3/templates", "{\"name\":\"" + name + "\",\"minFreeDiskMb\":10240}");
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(202);
    String id = Json.parse(ok.body().getBytes(StandardCharsets.UTF_8)).path("templateID").asText();
    call(server, "DELETE", "/templates/" + id, "");
  }

  private static void refused(LocalServer server, String method, String path, String body, String messageStart) throws Exception {
    HttpResponse<String> r = call(server, method, path, body);
    assertThat(r.statusCode()).as("%s %s %s: %s", method, path, body, r.body()).isEqualTo(400);
    assertThat(Json.parse(r.body().getBytes(StandardCharsets.UTF_8)).path("message").asText()).as(body).startsWith(messageStart);
  }

  private static HttpResponse<String> call(LocalServer server, String method, String path, String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(server.apiUrl() + path)).header("X-API-KEY", server.apiKey())
        .header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
