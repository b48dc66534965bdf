package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the server accepts and refuses in request bodies, exactly: wrong types, missing fields,
 * unknown fields, nulls and edge values, each with its status and message, on the control plane
 * and on envd's process and filesystem calls. Clients (E2B's own SDKs among them) rely on these
 * answers, so a change in how bodies are read must leave every one of them as it is.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RequestBodiesTest {
  private static final String OBJECT = "request body must be a JSON object";
  private static final String SECONDS = "'timeout' must be a non-negative number of seconds";

  private EnvdHttp envd;
  private LocalServer server;
  private LiveSandbox sandbox;
  private String token;
  private HttpClient http;

  @BeforeAll
  void start(E2BApi e2b, LocalServer server) throws Exception {
    this.envd = EnvdHttp.open(e2b, server);
    this.server = server;
    this.sandbox = envd.sandbox;
    this.token = envd.token;
    this.http = envd.http;
  }

  @AfterAll
  void stop() {
    if (envd != null) {
      envd.close();
    }
  }

  private record Answer(int status, String body) {
    JsonNode json() throws Exception {
      return Json.parse(body.getBytes(StandardCharsets.UTF_8));
    }
  }

  private Answer api(String method, String path, String body) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(server.apiUrl().resolve(path)).header("X-API-KEY", server.apiKey())
        .header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body)).build();
    HttpResponse<String> a = http.send(r, HttpResponse.BodyHandlers.ofString());
    return new Answer(a.statusCode(), a.body());
  }

  /** Asserts the control plane's error: the status, and {@code {code, message}} with that status as code. */
  private void refused(String method, String path, String body, int status, String message) throws Exception {
    Answer a = api(method, path, body);
    assertThat(a.status()).as("%s %s %s: %s", method, path, body, a.body()).isEqualTo(status);
    assertThat(a.json().path("code").asInt()).as(a.body()).isEqualTo(status);
    assertThat(a.json().path("message").asText()).as("%s %s %s", method, path, body).isEqualTo(message);
  }

  private void accepted(String method, String path, String body, int status) throws Exception {
    Answer a = api(method, path, body);
    assertThat(a.status()).as("%s %s %s: %s", method, path, body, a.body()).isEqualTo(status);
  }

  private String sb() {
    return "/sandboxes/" + sandbox.id();
  }

  @Test
  @DisplayName("POST /sandboxes: shape, templateID, timeout, envVars and metadata")
  void createBasics() throws Exception {
    refused("POST", "/sandboxes", "[]", 400, OBJECT);
    refused("POST", "/sandboxes", "\"base\"", 400, OBJECT);
    Answer broken = api("POST", "/sandboxes", "{\"templateID\":");
    assertThat(broken.status()).isEqualTo(400);
    assertThat(broken.json().path("message").asText()).startsWith("request body is not valid JSON: ");
    refused("POST", "/sandboxes", "{}", 400, "'templateID' is required");
    refused("POST", "/sandboxes", "{\"templateID\":null}", 400, "'templateID' is required");
    refused("POST", "/sandboxes", "{\"templateID\":\"  \"}", 400, "'templateID' is required");
    // a number is read as its text; an unknown field is ignored (E2B's SDKs send fields this server does not know)
    refused("POST", "/sandboxes", "{\"templateID\":12345,\"someFutureField\":{\"x\":[1]}}", 404, "template '12345' not found");
    refused("POST", "/sandboxes", "{\"templateID\":1.25e2}", 404, "template '125.0' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"secure\":true,\"mcp\":null}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":\"30\"}", 400, SECONDS);
    // the template is checked first, whatever else is wrong
    refused("POST", "/sandboxes", "{\"timeout\":\"30\",\"envVars\":[],\"volumeMounts\":{},\"network\":{\"rules\":[1]}}", 400,
        "'templateID' is required");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"envVars\":[],\"metadata\":5}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"network\":{\"denyOut\":\"x\"},\"templateID\":\"base\",\"volumeMounts\":{}}", 400,
        "'volumeMounts' must be a list of {name, path}");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":true}", 400, SECONDS);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":-1}", 400, SECONDS);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":[30]}", 400, SECONDS);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":1e30}", 400, SECONDS);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":99999999999999999999999}", 400, SECONDS);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"timeout\":86401}", 400, "Timeout cannot be greater than 24 hours");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"timeout\":86400.9}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"timeout\":null}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":[]}", 400, "'envVars' must be an object of strings");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":\"A=1\"}", 400, "'envVars' must be an object of strings");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"A\":{}}}", 400, "'envVars.A' must be a string");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"A\":[\"x\"]}}", 400, "'envVars.A' must be a string");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"A\":null}}", 400, "'envVars.A' must be a string");
    // scalar values are read as their text: envVars passes, and metadata (read next) is what is refused
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"A\":1,\"B\":true,\"C\":1.5},\"metadata\":[]}", 400,
        "'metadata' must be an object of strings");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":null,\"metadata\":{\"k\":{}}}", 400,
        "'metadata.k' must be a string");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":5}", 400, "'envVars' must be an object of strings");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":\"\"}", 400, "'envVars' must be an object of strings");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"A\":\"x\",\"B\":[]}}", 400, "'envVars.B' must be a string");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"metadata\":\"x\",\"envVars\":{}}", 400,
        "'metadata' must be an object of strings");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"metadata\":{\"a\":\"1\",\"b\":null}}", 400, "'metadata.b' must be a string");
    // a map's scalar values are kept as their text: numbers as Jackson writes them
    Answer made = api("POST", "/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"N\":1e2,\"T\":true,\"S\":\"s\",\"I\":-3},"
        + "\"metadata\":{\"m\":12,\"f\":1.5,\"n\":\"x\",\"b\":false}}");
    assertThat(made.status()).as(made.body()).isEqualTo(201);
    String id = made.json().path("sandboxID").asText();
    try {
      assertThat(api("GET", "/sandboxes/" + id, "").json().path("metadata"))
          .isEqualTo(Json.parse("{\"m\":\"12\",\"f\":\"1.5\",\"n\":\"x\",\"b\":\"false\"}".getBytes(StandardCharsets.UTF_8)));
      Streamed env = stream(id, Tokens.envdToken(server, id), "process.Process/Start",
          "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo $N,$T,$S,$I\"]}}");
      assertThat(env.stdout()).isEqualTo("100.0,true,s,-3\n");
    } finally {
      accepted("DELETE", "/sandboxes/" + id, "", 204);
    }
  }

  @Test
  @DisplayName("POST /sandboxes: lifecycle flags read leniently, volume mounts and network checked")
  void createLifecycleMountsNetwork() throws Exception {
    String autoResumeNeedsPause = "autoResume is only valid when the sandbox pauses at its timeout (autoPause)";
    String noColdAutoResume = "autoPauseMemory:false cannot be combined with autoResume";
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"autoResume\":{\"enabled\":true}}", 400, autoResumeNeedsPause);
    // booleans are read leniently: "true" and 1 are true, "false" and 0 false, anything else the default
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"autoResume\":{\"enabled\":\"true\"}}", 400, autoResumeNeedsPause);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"autoPause\":\"yes\",\"autoResume\":{\"enabled\":1}}", 400,
        autoResumeNeedsPause);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"autoPause\":1,\"autoResume\":{\"enabled\":true},\"autoPauseMemory\":\"false\"}",
        400, noColdAutoResume);
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"autoPause\":\"true\",\"autoResume\":{\"enabled\":2},\"autoPauseMemory\":0}",
        400, noColdAutoResume);
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"autoPause\":true,\"autoResume\":{\"enabled\":true},\"autoPauseMemory\":[]}",
        404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"autoResume\":true}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"autoResume\":{\"enabled\":null}}", 404, "template 'nosuch' not found");

    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":{}}", 400, "'volumeMounts' must be a list of {name, path}");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":\"v:/data\"}", 400,
        "'volumeMounts' must be a list of {name, path}");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"v\"}]}", 400,
        "each volume mount needs a name and a path");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"v\",\"path\":null}]}", 400,
        "each volume mount needs a name and a path");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[\"v\"]}", 400, "each volume mount needs a name and a path");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"v\",\"path\":\"data\"}]}", 400,
        "volume mount path must be a distinct absolute path other than /, got 'data'");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"v\",\"path\":\"/\"}]}", 400,
        "volume mount path must be a distinct absolute path other than /, got '/'");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"nosuchvolume\",\"path\":\"/data\",\"readOnly\":true}]}",
        404, "volume 'nosuchvolume' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":404404,\"path\":\"/data\"}]}", 404,
        "volume '404404' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":null,\"network\":{\"allowPublicTraffic\":\"false\"}}", 400,
        "'allowPublicTraffic' must be true or false");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"network\":{\"allowOut\":\"pypi.org\"}}", 400, "'allowOut' must be a list");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"network\":{\"denyOut\":[\"example.com\"]}}", 400,
        "'example.com' is not a valid IP or CIDR");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"network\":{\"denyOut\":[7]}}", 400, "'7' is not a valid IP or CIDR");
    // a network that is no object reads as one with no fields
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"network\":\"x\"}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"network\":[{\"denyOut\":[7]}]}", 404, "template 'nosuch' not found");
    refused("POST", "/sandboxes", "{\"templateID\":\"base\",\"network\":{\"rules\":[{}]}}", 400,
        "'rules' must be an object of destination to a list of rules");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"network\":{\"rules\":[],\"egressProxy\":null,\"future\":1},"
        + "\"allow_internet_access\":\"maybe\"}", 404, "template 'nosuch' not found");
  }

  @Test
  @DisplayName("timeout, refreshes, connect and resume: seconds as numbers only, within their bounds; fork's stricter checks")
  void secondsFields() throws Exception {
    refused("POST", sb() + "/timeout", "[]", 400, OBJECT);
    refused("POST", sb() + "/timeout", "", 400, "'timeout' is required");
    refused("POST", sb() + "/timeout", "{}", 400, "'timeout' is required");
    refused("POST", sb() + "/timeout", "{\"timeout\":null}", 400, "'timeout' is required");
    refused("POST", sb() + "/timeout", "{\"timeout\":\"300\"}", 400, SECONDS);
    refused("POST", sb() + "/timeout", "{\"timeout\":false}", 400, SECONDS);
    refused("POST", sb() + "/timeout", "{\"timeout\":{}}", 400, SECONDS);
    refused("POST", sb() + "/timeout", "{\"timeout\":-1.5}", 400, SECONDS);
    refused("POST", sb() + "/timeout", "{\"timeout\":\"\"}", 400, SECONDS);
    refused("POST", sb() + "/timeout", "{\"timeout\":86401}", 400, "Timeout cannot be greater than 24 hours");
    // the body is read before the sandbox is looked up
    refused("POST", "/sandboxes/nosuchsandbox0000000/timeout", "{\"timeout\":\"x\"}", 400, SECONDS);
    refused("POST", "/sandboxes/nosuchsandbox0000000/timeout", "{\"timeout\":60}", 404,
        "Sandbox \"nosuchsandbox0000000\" doesn't exist or you don't have access to it");
    accepted("POST", sb() + "/timeout", "{\"timeout\":600.9,\"unknown\":[1,2]}", 204);
    // a negative fraction is a negative number of seconds, however small (-0.5 was read as 0); -0.0 is 0
    String none = "/sandboxes/nosuchsandbox0000000";
    refused("POST", none + "/timeout", "{\"timeout\":-0.5}", 400, SECONDS);
    refused("POST", none + "/timeout", "{\"timeout\":-0.0}", 404, "Sandbox \"nosuchsandbox0000000\" doesn't exist or you don't have access to it");
    refused("POST", none + "/connect", "{\"timeout\":-0.001}", 400, SECONDS);
    refused("POST", none + "/resume", "{\"timeout\":-1e-9}", 400, SECONDS);
    refused("POST", none + "/refreshes", "{\"duration\":-0.5}", 400, "'duration' must be a non-negative number of seconds");
    refused("POST", "/sandboxes", "{\"templateID\":\"nosuch\",\"timeout\":-0.5}", 400, SECONDS);

    refused("POST", sb() + "/refreshes", "{\"duration\":\"60\"}", 400, "'duration' must be a non-negative number of seconds");
    refused("POST", sb() + "/refreshes", "{\"duration\":null}", 400, "'duration' is required");
    refused("POST", sb() + "/refreshes", "{\"duration\":3601}", 400, "duration must be between 0 and 3600 seconds");
    refused("POST", sb() + "/refreshes", "{\"duration\":86401}", 400, "Timeout cannot be greater than 24 hours");
    accepted("POST", sb() + "/refreshes", "{}", 204);
    accepted("POST", sb() + "/refreshes", "{\"duration\":0,\"timeout\":\"ignored\"}", 204);

    refused("POST", sb() + "/connect", "{}", 400, "'timeout' is required");
    refused("POST", sb() + "/connect", "{\"timeout\":\"60\"}", 400, SECONDS);
    String cold = "a cold reboot (memory:false) on resume is not supported by the local runtime";
    refused("POST", sb() + "/connect", "{\"timeout\":600,\"memory\":false}", 400, cold);
    refused("POST", sb() + "/connect", "{\"timeout\":600,\"memory\":\"false\"}", 400, cold);
    refused("POST", sb() + "/connect", "{\"timeout\":600,\"memory\":0}", 400, cold);
    accepted("POST", sb() + "/connect", "{\"timeout\":600,\"memory\":\"no\"}", 200);
    accepted("POST", sb() + "/connect", "{\"timeout\":600,\"memory\":null}", 200);
    refused("POST", "/v2" + sb() + "/connect", "{\"timeout\":[]}", 400, SECONDS);
    accepted("POST", "/v2" + sb() + "/connect", "{}", 200);

    refused("POST", sb() + "/resume", "{\"timeout\":\"60\"}", 400, SECONDS);
    refused("POST", sb() + "/resume", "{\"timeout\":60,\"autoPause\":\"x\"}", 409, "Sandbox \"" + sandbox.id() + "\" is already running");
    refused("POST", sb() + "/resume", "{}", 409, "Sandbox \"" + sandbox.id() + "\" is already running");

    refused("POST", sb() + "/fork", "[1]", 400, OBJECT);
    refused("POST", sb() + "/fork", "{\"timeout\":1.5}", 400, "'timeout' must be a whole number of seconds");
    refused("POST", sb() + "/fork", "{\"timeout\":\"60\"}", 400, "'timeout' must be a whole number of seconds");
    refused("POST", sb() + "/fork", "{\"timeout\":0}", 400, "Timeout must be greater than 0");
    refused("POST", sb() + "/fork", "{\"timeout\":-99999999999999999999}", 400, "Timeout must be greater than 0");
    refused("POST", sb() + "/fork", "{\"timeout\":86401}", 400, "Timeout cannot be greater than 24 hours");
    refused("POST", sb() + "/fork", "{\"timeout\":99999999999999999999}", 400, "Timeout cannot be greater than 24 hours");
    refused("POST", sb() + "/fork", "{\"count\":2.0}", 400, "'count' must be a whole number");
    refused("POST", sb() + "/fork", "{\"count\":true}", 400, "'count' must be a whole number");
    refused("POST", sb() + "/fork", "{\"count\":0}", 400, "Count must be at least 1");
    refused("POST", sb() + "/fork", "{\"count\":101}", 400, "Count cannot be greater than 100");
    refused("POST", sb() + "/fork", "{\"count\":4294967297}", 400, "Count cannot be greater than 100");
    // the first field checked is the first refused, whatever the body's order
    refused("POST", sb() + "/fork", "{\"count\":\"x\",\"timeout\":1.5}", 400, "'timeout' must be a whole number of seconds");
    refused("POST", sb() + "/fork", "{\"count\":0,\"timeout\":0}", 400, "Timeout must be greater than 0");
  }

  @Test
  @DisplayName("PUT network: each field's type and entries; unknown fields ignored; booleans read leniently")
  void networkUpdate() throws Exception {
    String path = sb() + "/network";
    refused("PUT", path, "[]", 400, OBJECT);
    refused("PUT", path, "{\"allowPublicTraffic\":1}", 400, "'allowPublicTraffic' must be true or false");
    refused("PUT", path, "{\"allowPublicTraffic\":\"true\"}", 400, "'allowPublicTraffic' must be true or false");
    refused("PUT", path, "{\"allowOut\":{}}", 400, "'allowOut' must be a list");
    refused("PUT", path, "{\"denyOut\":\"10.0.0.0/8\"}", 400, "'denyOut' must be a list");
    refused("PUT", path, "{\"denyOut\":[5]}", 400, "'5' is not a valid IP or CIDR");
    refused("PUT", path, "{\"denyOut\":[{}]}", 400, "'' is not a valid IP or CIDR");
    refused("PUT", path, "{\"denyOut\":[null]}", 400, "'' is not a valid IP or CIDR");
    refused("PUT", path, "{\"denyOut\":[\"10.0.0.0/33\"]}", 400, "'10.0.0.0/33' is not a valid IP or CIDR");
    refused("PUT", path, "{\"allowOut\":[\"not a host\"]}", 400, "'not a host' is not a valid domain, IP or CIDR");
    // entries are read as their text: a number, a flag; a list or object inside as empty
    refused("PUT", path, "{\"denyOut\":[true]}", 400, "'true' is not a valid IP or CIDR");
    refused("PUT", path, "{\"denyOut\":[[\"10.0.0.0/8\"]]}", 400, "'' is not a valid IP or CIDR");
    refused("PUT", path, "{\"denyOut\":[\"10.0.0.0/8\",1e1]}", 400, "'10.0' is not a valid IP or CIDR");
    refused("PUT", path, "{\"allowOut\":[1.5,\"x y\"]}", 400, "'x y' is not a valid domain, IP or CIDR");
    refused("PUT", path, "{\"allowOut\":[\"\"]}", 400, "'' is not a valid domain, IP or CIDR");
    refused("PUT", path, "{\"allowOut\":null,\"denyOut\":{\"a\":\"10.0.0.0/8\"}}", 400, "'denyOut' must be a list");
    refused("PUT", path, "{\"egressProxy\":{\"url\":\"http://p\"}}", 400,
        "'egressProxy' must be an object with a text 'address' (host:port, e.g. 'proxy.example.com:1080')");
    refused("PUT", path, "{\"egressProxy\":{}}", 400,
        "'egressProxy' must be an object with a text 'address' (host:port, e.g. 'proxy.example.com:1080')");
    refused("PUT", path, "{\"egressProxy\":{\"address\":\"p\"}}", 400, "'egressProxy.address' must be host:port, got 'p'");
    refused("PUT", path, "{\"egressProxy\":{\"address\":\"p:1080\",\"password\":\"pw-1\"}}", 400,
        "'egressProxy' password must come with a user name and be at most 255 bytes");
    refused("PUT", path, "{\"egressProxy\":{\"address\":\"p:1080\",\"username\":7}}", 400, "'egressProxy.username' must be text");
    refused("PUT", path, "{\"egressProxy\":{\"address\":\"127.0.0.1:1080\",\"username\":\"u\",\"password\":\"pw-2\"}}", 400,
        "'egressProxy' 127.0.0.1:1080 cannot be used: 127.0.0.1 is a loopback address");
    refused("PUT", path, "{\"rules\":\"x\"}", 400, "'rules' must be an object of destination to a list of rules");
    refused("PUT", path, "{\"rules\":{\"a.example.com\":[{\"transform\":{\"headers\":{\"Host\":\"b.example.com\"}}}]}}", 400,
        "'rules' header 'Host' frames or routes the request and cannot be set by a rule");
    refused("PUT", path, "{\"rules\":{\"a.example.com\":[{\"transform\":{\"headers\":{\"X-A\":\"${e2b.identity.tokens.aws}\"}}}]}}",
        400, "'rules' header 'X-A' fills in a workload identity token, which E2B's cloud mints and the local runtime does not");
    refused("PUT", path, "{\"rules\":{\"not a host\":[]}}", 400,
        "'rules' key 'not a host' is not a domain, a *. wildcard, an IP or a CIDR");
    // allowOut's entries are checked before denyOut's type
    refused("PUT", path, "{\"denyOut\":\"x\",\"allowOut\":[\"not a host\"]}", 400, "'not a host' is not a valid domain, IP or CIDR");
    refused("PUT", path, "{\"rules\":[1],\"denyOut\":[\"x\"]}", 400, "'x' is not a valid IP or CIDR");
    refused("PUT", "/sandboxes/nosuchsandbox0000000/network", "{\"denyOut\":[5]}", 404,
        "Sandbox \"nosuchsandbox0000000\" doesn't exist or you don't have access to it");
    accepted("PUT", path, "{\"denyOut\":[\"10.9.0.0/16\"],\"rules\":[],\"egressProxy\":null,\"future\":{\"a\":1},"
        + "\"allow_internet_access\":\"false\"}", 204);
    JsonNode detail = api("GET", sb(), "").json();
    assertThat(detail.path("network").path("denyOut").get(0).asText()).isEqualTo("10.9.0.0/16");
    assertThat(detail.path("allowInternetAccess").asBoolean(true)).as(detail.toString()).isFalse();
    accepted("PUT", path, "{\"denyOut\":null,\"allowOut\":null,\"allow_internet_access\":1}", 204);
    detail = api("GET", sb(), "").json();
    assertThat(detail.path("allowInternetAccess").asBoolean(false)).as(detail.toString()).isTrue();
    // an update that does not say allow_internet_access is not one that says false
    accepted("PUT", path, "{\"denyOut\":[\"10.8.0.0/16\"]}", 204);
    detail = api("GET", sb(), "").json();
    assertThat(detail.has("allowInternetAccess") && detail.get("allowInternetAccess").isNull()).as(detail.toString()).isTrue();
  }

  @Test
  @DisplayName("volumes and snapshots: the name as text, checked by its pattern; unknown fields ignored")
  void volumesAndSnapshots() throws Exception {
    refused("POST", "/volumes", "[]", 400, OBJECT);
    refused("POST", "/volumes", "{}", 400, "volume name must match ^[a-zA-Z0-9_-]+$, got 'null'");
    refused("POST", "/volumes", "{\"name\":null}", 400, "volume name must match ^[a-zA-Z0-9_-]+$, got 'null'");
    refused("POST", "/volumes", "{\"name\":{}}", 400, "volume name must match ^[a-zA-Z0-9_-]+$, got ''");
    refused("POST", "/volumes", "{\"name\":[\"a\"]}", 400, "volume name must match ^[a-zA-Z0-9_-]+$, got ''");
    refused("POST", "/volumes", "{\"name\":\"a b\"}", 400, "volume name must match ^[a-zA-Z0-9_-]+$, got 'a b'");
    refused("POST", "/volumes", "{\"name\":1.5}", 400, "volume name must match ^[a-zA-Z0-9_-]+$, got '1.5'");
    String number = Long.toString(ThreadLocalRandom.current().nextLong(1_000_000_000L, 9_000_000_000L));
    Answer made = api("POST", "/volumes", "{\"name\":" + number + ",\"future\":[1]}");
    assertThat(made.status()).as(made.body()).isEqualTo(201);
    assertThat(made.json().path("name").asText()).isEqualTo(number);
    accepted("DELETE", "/volumes/" + made.json().path("volumeID").asText(), "", 204);

    refused("POST", sb() + "/snapshots", "[]", 400, OBJECT);
    refused("POST", sb() + "/snapshots", "{\"name\":\"a b\"}", 400, "snapshot name must be letters, digits, '_', '.' or '-', got 'a b'");
    // a number is a name, as its text
    String snapName = Long.toString(ThreadLocalRandom.current().nextLong(1_000_000_000L, 9_000_000_000L));
    Answer snap = api("POST", sb() + "/snapshots", "{\"name\":" + snapName + ",\"future\":{}}");
    assertThat(snap.status()).as(snap.body()).isEqualTo(201);
    assertThat(snap.json().path("snapshotID").asText()).isEqualTo(snapName + ":default");
    accepted("DELETE", "/templates/" + snapName + ":default", "", 204);
    refused("POST", "/sandboxes/nosuchsandbox0000000/snapshots", "{\"name\":5}", 404,
        "Sandbox \"nosuchsandbox0000000\" doesn't exist or you don't have access to it");
  }

  @Test
  @DisplayName("template build requests and tags: names as text, tags strictly a list of strings, public strictly boolean")
  void templates() throws Exception {
    String tagsList = "'tags' must be a list of strings";
    refused("POST", "/v3/templates", "[]", 400, OBJECT);
    refused("POST", "/v3/templates", "{}", 400, "'name' is required");
    refused("POST", "/v3/templates", "{\"name\":null,\"alias\":null}", 400, "'name' is required");
    refused("POST", "/v3/templates", "{\"name\":\"  \"}", 400, "'name' is required");
    refused("POST", "/v3/templates", "{\"name\":\"t\",\"tags\":[1]}", 400, tagsList);
    refused("POST", "/v3/templates", "{\"name\":\"t\",\"tags\":[null]}", 400, tagsList);
    refused("POST", "/v3/templates", "{\"name\":\"t\",\"tags\":\"v1\"}", 400, tagsList);
    refused("POST", "/v3/templates", "{\"name\":\"t\",\"tags\":{}}", 400, tagsList);
    String badName = "template name must be lowercase letters, digits, '_', '.' or '-' (and not 'base'), got '";
    refused("POST", "/v3/templates", "{\"name\":\"Bad Name\",\"tags\":null}", 400, badName + "Bad Name'");
    refused("POST", "/v3/templates", "{\"alias\":\"base\"}", 400, badName + "base'");
    refused("POST", "/v3/templates", "{\"name\":{},\"alias\":\"ok\",\"cpuCount\":\"x\",\"memoryMB\":[],\"future\":1}", 400,
        "'name' is required");
    refused("POST", "/v3/templates", "{\"name\":[\"x\"]}", 400, "'name' is required");
    refused("POST", "/v3/templates", "{\"name\":1e10,\"tags\":[]}", 400, badName + "1.0E10'");
    refused("POST", "/v3/templates", "{\"name\":\"Bad Name\",\"tags\":[1]}", 400, tagsList);
    refused("POST", "/v3/templates", "{\"alias\":1.5e10,\"name\":null}", 400, badName + "1.5E10'");

    refused("POST", "/templates/tags", "[]", 400, OBJECT);
    refused("POST", "/templates/tags", "{\"target\":\"nosuch:v1\",\"tags\":[1]}", 400, tagsList);
    refused("POST", "/templates/tags", "{\"tags\":[\"v2\"]}", 400, "'target' is required: the template as name:tag");
    refused("POST", "/templates/tags", "{\"target\":\"nosuch:v1\"}", 400, "at least one tag is required");
    refused("DELETE", "/templates/tags", "{\"name\":\"nosuch\",\"tags\":{}}", 400, tagsList);
    refused("DELETE", "/templates/tags", "{\"tags\":[\"v1\"]}", 400, "'name' is required");
    refused("DELETE", "/templates/tags", "{\"name\":\"nosuch:v1\",\"tags\":[\"v1\"]}", 400,
        "the template name should not contain a tag, use the 'tags' field instead");
    refused("DELETE", "/templates/tags", "{\"name\":\"nosuch\",\"tags\":[]}", 400, "at least one tag is required");
    refused("DELETE", "/templates/tags", "{\"name\":\"nosuch\",\"tags\":[\"default\"],\"x\":1}", 400, "cannot delete the 'default' tag");
  }

  // envd: the process and filesystem calls

  private Answer unary(String call, String body, String contentType) throws Exception {
    HttpRequest r = envd.call("/" + call, contentType).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    HttpResponse<String> a = http.send(r, HttpResponse.BodyHandlers.ofString());
    return new Answer(a.statusCode(), a.body());
  }

  /** The paths a ListDir answers, sorted. */
  private String listed(String body) throws Exception {
    Answer a = unary("filesystem.Filesystem/ListDir", body, "application/json");
    assertThat(a.status()).as(body + ": " + a.body()).isEqualTo(200);
    java.util.List<String> paths = new java.util.ArrayList<>();
    a.json().path("entries").forEach(e -> paths.add(e.path("path").asText()));
    return paths.stream().sorted().toList().toString();
  }

  private void unaryRefused(String call, String body, int status, String code, String message) throws Exception {
    Answer a = unary(call, body, "application/json");
    assertThat(a.status()).as("%s %s: %s", call, body, a.body()).isEqualTo(status);
    assertThat(a.json().path("code").asText()).as(a.body()).isEqualTo(code);
    assertThat(a.json().path("message").asText()).as("%s %s", call, body).isEqualTo(message);
  }

  /** A server-streaming call's messages: the stdout it carried, and its end message. */
  private record Streamed(String stdout, String end) {}

  private Streamed stream(String call, String body) throws Exception {
    return stream(sandbox.id(), token, call, body);
  }

  private Streamed stream(String id, String accessToken, String call, String body) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(server.sandboxUrl().resolve("/" + call))
        .header("E2b-Sandbox-Id", id).header("X-Access-Token", accessToken)
        .header("Content-Type", Connect.STREAM_CONTENT_TYPE).header("Connect-Protocol-Version", "1")
        .POST(HttpRequest.BodyPublishers.ofByteArray(Connect.envelope(0, body.getBytes(StandardCharsets.UTF_8)))).build();
    HttpResponse<byte[]> a = http.send(r, HttpResponse.BodyHandlers.ofByteArray());
    assertThat(a.statusCode()).as(new String(a.body(), StandardCharsets.UTF_8)).isEqualTo(200);
    StringBuilder out = new StringBuilder();
    try (InputStream in = new ByteArrayInputStream(a.body())) {
      Connect.Envelope env;
      while ((env = Connect.read(in)) != null) {
        if (env.endStream()) {
          return new Streamed(out.toString(), new String(env.payload(), StandardCharsets.UTF_8));
        }
        JsonNode data = Json.parse(env.payload()).path("event").path("data");
        if (data.has("stdout")) {
          out.append(new String(Base64.getDecoder().decode(data.get("stdout").asText()), StandardCharsets.UTF_8));
        }
      }
    }
    throw new AssertionError(call + " " + body + ": the stream had no end message");
  }

  private void streamRefused(String call, String body, String code, String message) throws Exception {
    JsonNode end = Json.parse(stream(call, body).end().getBytes(StandardCharsets.UTF_8));
    assertThat(end.path("error").path("code").asText()).as("%s %s: %s", call, body, end).isEqualTo(code);
    assertThat(end.path("error").path("message").asText()).as("%s %s", call, body).isEqualTo(message);
  }

  @Test
  @DisplayName("process Start: cmd required, args and envs read as text, unknown fields ignored; selectors checked")
  void processCalls() throws Exception {
    String start = "process.Process/Start";
    streamRefused(start, "{}", "invalid_argument", "'process.cmd' is required");
    streamRefused(start, "{\"process\":null}", "invalid_argument", "'process.cmd' is required");
    streamRefused(start, "{\"process\":{\"cmd\":\"\"}}", "invalid_argument", "'process.cmd' is required");
    streamRefused(start, "{\"process\":{\"cmd\":{}}}", "invalid_argument", "'process.cmd' is required");
    streamRefused(start, "{\"process\":\"/bin/true\"}", "invalid_argument", "'process.cmd' is required");
    Streamed echoed = stream(start, "{\"process\":{\"cmd\":\"/bin/echo\",\"args\":[1,true,\"x\",2.5],\"future\":{}},\"stdin\":\"no\"}");
    assertThat(echoed.stdout()).isEqualTo("1 true x 2.5\n");
    Streamed env = stream(start, "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo $A$B\"],\"envs\":{\"A\":7,\"B\":false}},"
        + "\"tag\":null}");
    assertThat(env.stdout()).isEqualTo("7false\n");
    Streamed noArgs = stream(start, "{\"process\":{\"cmd\":\"/bin/echo\",\"args\":\"ignored\",\"envs\":[1]}}");
    assertThat(noArgs.stdout()).isEqualTo("\n");
    Answer unaryStart = unary(start, "{\"process\":{\"cmd\":\"/bin/true\"}}", "application/json");
    assertThat(unaryStart.json().path("message").asText()).as(unaryStart.body())
        .isEqualTo("streaming calls take Content-Type application/connect+json, got application/json");

    streamRefused("process.Process/Connect", "{\"process\":{}}", "invalid_argument", "the process selector needs a pid or a tag");
    streamRefused("process.Process/Connect", "{\"process\":{\"pid\":999999}}", "not_found", "process with pid 999999 not found");
    streamRefused("process.Process/Connect", "{\"process\":{\"tag\":404}}", "not_found", "process with tag 404 not found");
    unaryRefused("process.Process/SendSignal", "{\"process\":{\"tag\":\"nosuch\"},\"signal\":9}", 404, "not_found",
        "process with tag nosuch not found");
    unaryRefused("process.Process/CloseStdin", "{\"process\":{}}", 400, "invalid_argument", "the process selector needs a pid or a tag");
    unaryRefused("process.Process/Update", "[]", 400, "invalid_argument", "the request message must be a JSON object");
  }

  @Test
  @DisplayName("filesystem calls: path fields required and read as text, unknown fields ignored, the body a JSON object")
  void filesystemCalls() throws Exception {
    unaryRefused("filesystem.Filesystem/Stat", "[]", 400, "invalid_argument", "the request message must be a JSON object");
    unaryRefused("filesystem.Filesystem/Stat", "{", 400, "invalid_argument", "the request message is not valid JSON");
    unaryRefused("filesystem.Filesystem/Stat", "{}", 400, "invalid_argument", "'path' is required");
    unaryRefused("filesystem.Filesystem/Stat", "{\"path\":null}", 400, "invalid_argument", "'path' is required");
    unaryRefused("filesystem.Filesystem/Stat", "{\"path\":\"\"}", 400, "invalid_argument", "'path' is required");
    unaryRefused("filesystem.Filesystem/Stat", "{\"path\":{}}", 400, "invalid_argument", "'path' is required");
    Answer stat = unary("filesystem.Filesystem/Stat", "{\"path\":\"/etc/hostname\",\"future\":[1]}", "application/json");
    assertThat(stat.status()).as(stat.body()).isEqualTo(200);
    assertThat(stat.json().path("entry").path("path").asText()).isEqualTo("/etc/hostname");
    Answer wrongType = unary("filesystem.Filesystem/Stat", "{\"path\":\"/etc\"}", "text/plain");
    assertThat(wrongType.status()).isEqualTo(400);
    assertThat(wrongType.json().path("message").asText()).isEqualTo("unary calls take Content-Type application/json, got text/plain");
    unaryRefused("filesystem.Filesystem/ListDir", "{\"depth\":2}", 400, "invalid_argument", "'path' is required");
    // a depth that is no whole number is the caller's mistake, named (it was an internal error)
    String depth = "'depth' must be a whole number";
    unaryRefused("filesystem.Filesystem/ListDir", "{\"path\":\"/etc\",\"depth\":\"x\"}", 400, "invalid_argument", depth);
    unaryRefused("filesystem.Filesystem/ListDir", "{\"path\":\"/etc\",\"depth\":1.5}", 400, "invalid_argument", depth);
    unaryRefused("filesystem.Filesystem/ListDir", "{\"path\":\"/etc\",\"depth\":[2]}", 400, "invalid_argument", depth);
    unaryRefused("filesystem.Filesystem/ListDir", "{\"path\":\"/etc\",\"depth\":4294967296}", 400, "invalid_argument", depth);
    // a depth is a whole number or its text; below 1 it is 1
    assertThat(unary("filesystem.Filesystem/MakeDir", "{\"path\":\"/tmp/pin-ls/a/b\"}", "application/json").status()).isEqualTo(200);
    for (String d : new String[] {"", ",\"depth\":null", ",\"depth\":0", ",\"depth\":-3", ",\"depth\":1.0"}) {
      assertThat(listed("{\"path\":\"/tmp/pin-ls\"" + d + "}")).as(d).isEqualTo("[/tmp/pin-ls/a]");
    }
    for (String d : new String[] {"2", "\"2\"", "2.0", "9"}) {
      assertThat(listed("{\"path\":\"/tmp/pin-ls\",\"depth\":" + d + "}")).as(d).isEqualTo("[/tmp/pin-ls/a, /tmp/pin-ls/a/b]");
    }
    unaryRefused("filesystem.Filesystem/MakeDir", "{\"path\":[]}", 400, "invalid_argument", "'path' is required");
    unaryRefused("filesystem.Filesystem/Move", "{\"source\":\"/tmp/a\"}", 400, "invalid_argument", "'destination' is required");
    unaryRefused("filesystem.Filesystem/Move", "{\"destination\":\"/tmp/a\",\"source\":null}", 400, "invalid_argument",
        "'source' is required");
    unaryRefused("filesystem.Filesystem/Remove", "{\"path\":\"\"}", 400, "invalid_argument", "'path' is required");
    unaryRefused("filesystem.Filesystem/CreateWatcher", "{\"path\":\"/etc/hostname\",\"recursive\":\"yes\"}", 400, "invalid_argument",
        "path '/etc/hostname' is not a directory");
    unaryRefused("filesystem.Filesystem/GetWatcherEvents", "{}", 404, "not_found", "watcher null not found");
    unaryRefused("filesystem.Filesystem/GetWatcherEvents", "{\"watcherId\":5}", 404, "not_found", "watcher 5 not found");
    unaryRefused("filesystem.Filesystem/RemoveWatcher", "{\"watcherId\":null}", 404, "not_found", "watcher null not found");
    streamRefused("filesystem.Filesystem/WatchDir", "{\"path\":\"\"}", "invalid_argument", "'path' is required");
    streamRefused("filesystem.Filesystem/WatchDir", "{\"path\":\"/etc/hostname\",\"recursive\":1}", "invalid_argument",
        "path '/etc/hostname' is not a directory");
  }
}
