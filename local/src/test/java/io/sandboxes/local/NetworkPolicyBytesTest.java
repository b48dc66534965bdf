package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.e2b.internal.Json;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The exact bytes of a sandbox's stored network policy as its detail shows it, over real HTTP:
 * as given at create, as replaced by an update (which keeps public traffic as it was), an empty
 * one, and none at all.
 */
@ExtendWith(SharedServer.class)
class NetworkPolicyBytesTest {
  private static final Pattern NETWORK = Pattern.compile("\"network\":(\\{[^}]*})");

  private static HttpRequest.Builder api(LocalServer server, String path) {
    return HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey());
  }

  private static String create(HttpClient http, LocalServer server, String body) throws Exception {
    HttpResponse<byte[]> a = http.send(api(server, "/sandboxes").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
    assertThat(a.statusCode()).as(new String(a.body(), StandardCharsets.UTF_8)).isEqualTo(201);
    return Json.requireText(Json.parse(a.body()), "sandboxID");
  }

  /** The detail's network as written, or {@code absent}. */
  private static String network(HttpClient http, LocalServer server, String id) throws Exception {
    HttpResponse<String> detail = http.send(api(server, "/sandboxes/" + id).GET().build(), HttpResponse.BodyHandlers.ofString());
    String body = detail.body();
    if (detail.statusCode() != 200) {
      return "no detail: " + detail.statusCode() + " " + body;
    }
    Matcher m = NETWORK.matcher(body);
    return m.find() ? m.group(1) : body.contains("\"network\"") ? "unreadable: " + body : "absent";
  }

  @Test
  @DisplayName("a stored policy reads back byte for byte: at create, after an update, empty, and absent")
  void storedPolicy(LocalServer server) throws Exception {
    SoftAssertions soft = new SoftAssertions();
    try (HttpClient http = HttpClient.newHttpClient()) {
      String given = create(http, server,
          "{\"templateID\":\"base\",\"timeout\":600,\"network\":{\"denyOut\":[\"10.9.9.9\"],\"allowPublicTraffic\":false}}");
      // each lives ten minutes: without a timeout E2B's default is 15 s, which a loaded machine outlasted here
      String empty = create(http, server, "{\"templateID\":\"base\",\"timeout\":600,\"allow_internet_access\":false}");
      String none = create(http, server, "{\"templateID\":\"base\",\"timeout\":600}");
      try {
        soft.assertThat(network(http, server, given)).isEqualTo("{\"allowPublicTraffic\":false,\"denyOut\":[\"10.9.9.9\"]}");
        HttpResponse<String> put = http.send(api(server, "/sandboxes/" + given + "/network").header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString("{\"allowOut\":[],\"denyOut\":[\"10.8.8.0/24\"],\"allowPublicTraffic\":true}")).build(),
            HttpResponse.BodyHandlers.ofString());
        soft.assertThat(put.statusCode()).as(put.body()).isEqualTo(204);
        // in E2B's field order, as at create (a tree moved the kept allowPublicTraffic to the end)
        soft.assertThat(network(http, server, given))
            .isEqualTo("{\"allowPublicTraffic\":false,\"allowOut\":[],\"denyOut\":[\"10.8.8.0/24\"]}");
        soft.assertThat(network(http, server, empty)).isEqualTo("{}");
        soft.assertThat(network(http, server, none)).isEqualTo("absent");
      } finally {
        for (String id : new String[] {given, empty, none}) {
          http.send(api(server, "/sandboxes/" + id).DELETE().build(), HttpResponse.BodyHandlers.discarding());
        }
      }
    }
    soft.assertAll();
  }
}
