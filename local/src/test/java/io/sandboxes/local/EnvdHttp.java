package io.sandboxes.local;

import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.LiveSandbox;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * One real sandbox and a plain HTTP client that speaks to its envd through the server, as E2B's
 * SDKs do (sandbox id and access token in headers, Connect's JSON): for tests that pin the exact
 * bytes of requests and answers. Closing it kills the sandbox and the client.
 */
final class EnvdHttp implements AutoCloseable {
  final LocalServer server;
  final LiveSandbox sandbox;
  final String token;
  final HttpClient http;

  private EnvdHttp(LocalServer server, LiveSandbox sandbox, String token) {
    this.server = server;
    this.sandbox = sandbox;
    this.token = token;
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  /** A new sandbox of base, and its envd's access token. */
  static EnvdHttp open(E2BApi e2b, LocalServer server) throws Exception {
    LiveSandbox sandbox = e2b.create();
    try {
      return new EnvdHttp(server, sandbox, Tokens.envdToken(server, sandbox.id()));
    } catch (Exception | Error e) {
      sandbox.close();
      throw e;
    }
  }

  /** A request to envd's {@code path} (e.g. {@code /process.Process/Start}) with the sandbox's headers and Connect's. */
  HttpRequest.Builder call(String path, String contentType) {
    return HttpRequest.newBuilder(server.sandboxUrl().resolve(path))
        .header("E2b-Sandbox-Id", sandbox.id()).header("X-Access-Token", token)
        .header("Content-Type", contentType).header("Connect-Protocol-Version", "1");
  }

  /** A unary Connect call with a JSON body: its status and body as {@code "200 {...}"}. */
  String unary(String path, String body) throws Exception {
    HttpResponse<String> a = http.send(call(path, "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    return a.statusCode() + " " + a.body();
  }

  /** A server-streaming Connect call whose one request message is {@code body}. */
  HttpRequest.Builder stream(String path, String body) {
    return call(path, Connect.STREAM_CONTENT_TYPE)
        .POST(HttpRequest.BodyPublishers.ofByteArray(Connect.envelope(0, body.getBytes(StandardCharsets.UTF_8))));
  }

  @Override
  public void close() {
    try {
      sandbox.close();
    } finally {
      http.close();
    }
  }
}
