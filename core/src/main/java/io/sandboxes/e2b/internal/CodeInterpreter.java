package io.sandboxes.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.CodeChart;
import io.sandboxes.CodeContext;
import io.sandboxes.CodeError;
import io.sandboxes.CodeExecution;
import io.sandboxes.CodeResult;
import io.sandboxes.CodeTimeoutException;
import io.sandboxes.RunCodeOptions;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxRpcException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's code interpreter: E2B's HTTP service on port {@value #PORT}, reached at the
 * sandbox's daemon address with {@code E2b-Sandbox-Port: 49999}. {@code POST /execute} answers one
 * JSON event per line ({@code stdout}, {@code stderr}, {@code result}, {@code error},
 * {@code number_of_executions}, {@code keepalive}, {@code end_of_execution}); the contexts are a
 * small REST resource. Thread-safe.
 */
public final class CodeInterpreter {
  /** The code interpreter's port inside the sandbox. */
  public static final int PORT = 49999;
  /** The longest event line accepted: a large chart's base64 PNG fits many times over. */
  static final int MAX_LINE = 64 << 20;
  private static final int MAX_ERROR_BODY = 64 * 1024;

  private final Http http;
  private final URI base;
  private final String sandboxId;
  private final @Nullable String accessToken;
  private final Envd.Unreachable unreachable;

  CodeInterpreter(Http http, URI base, String sandboxId, @Nullable String accessToken, Envd.Unreachable unreachable) {
    this.http = http;
    this.base = base;
    this.sandboxId = sandboxId;
    this.accessToken = accessToken;
    this.unreachable = unreachable;
    Secrets.hold(this, accessToken);
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder b = http.request(base.resolve(path))
        .header(Envd.SANDBOX_ID_HEADER, sandboxId)
        .header(Envd.SANDBOX_PORT_HEADER, Integer.toString(PORT))
        .header("Content-Type", "application/json");
    if (accessToken != null) {
      b.header(Envd.ACCESS_TOKEN_HEADER, accessToken);
    }
    return b;
  }

  /** Runs code and waits for its end, its timeout, or a broken stream. */
  public CodeExecution run(String code, RunCodeOptions options) {
    String context = "run code in sandbox " + sandboxId;
    ObjectNode body = Json.object().put("code", code);
    if (options.context() != null) {
      body.put("context_id", options.context());
    }
    if (options.language() != null) {
      body.put("language", options.language());
    }
    if (!options.env().isEmpty()) {
      body.set("env_vars", Json.toObject(options.env()));
    }
    HttpRequest req = request("execute").POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body))).build();
    HttpResponse<InputStream> response = http.stream(req, context);
    InputStream in = response.body();
    if (response.statusCode() != 200) {
      byte[] raw;
      try (in) {
        raw = in.readNBytes(MAX_ERROR_BODY);
      } catch (IOException e) {
        raw = new byte[0];
      }
      throw error(response.statusCode(), raw, context);
    }
    Collector c = new Collector(options);
    AtomicBoolean timedOut = new AtomicBoolean();
    try (in; Watchdog ignored = options.timeout().isZero() ? null : Watchdog.arm(sandboxId, options.timeout(), () -> {
      timedOut.set(true);
      closeQuietly(in);
    })) {
      NdjsonLines lines = new NdjsonLines(in, MAX_LINE);
      String line;
      while ((line = lines.next()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode event = Json.parse(line.getBytes(StandardCharsets.UTF_8));
        if (c.accept(event)) {
          return c.execution();
        }
      }
    } catch (IOException e) {
      if (timedOut.get()) {
        throw new CodeTimeoutException(options.timeout(), c.execution());
      }
      throw new SandboxException(context + ": the code interpreter's stream broke: " + e.getMessage(), e);
    }
    if (timedOut.get()) {
      throw new CodeTimeoutException(options.timeout(), c.execution());
    }
    // the outcome is not known: the stream ended without saying the execution did
    throw new SandboxException(context + ": the code interpreter's stream ended before the execution did");
  }

  /** Gathers one execution's events, calling the listeners as they come. */
  private static final class Collector {
    private final RunCodeOptions options;
    private final List<CodeResult> results = new ArrayList<>();
    private final List<String> stdout = new ArrayList<>();
    private final List<String> stderr = new ArrayList<>();
    private @Nullable CodeError error;
    private int count;

    Collector(RunCodeOptions options) {
      this.options = options;
    }

    /** @return true at the end of the execution */
    boolean accept(JsonNode event) {
      switch (event.path("type").asText()) {
        case "stdout" -> {
          String text = event.path("text").asText("");
          stdout.add(text);
          if (options.onStdout() != null) {
            options.onStdout().accept(text);
          }
        }
        case "stderr" -> {
          String text = event.path("text").asText("");
          stderr.add(text);
          if (options.onStderr() != null) {
            options.onStderr().accept(text);
          }
        }
        case "result" -> {
          CodeResult r = result(event);
          results.add(r);
          if (options.onResult() != null) {
            options.onResult().accept(r);
          }
        }
        case "error" -> {
          CodeError e = new CodeError(event.path("name").asText(""), event.path("value").asText(""),
              event.path("traceback").isArray() ? String.join("\n", texts(event.path("traceback"))) : event.path("traceback").asText(""));
          error = e;
          if (options.onError() != null) {
            options.onError().accept(e);
          }
        }
        case "number_of_executions" -> count = event.path("execution_count").asInt(0);
        case "end_of_execution" -> {
          return true;
        }
        default -> {
          // keepalive, and any event a newer interpreter adds
        }
      }
      return false;
    }

    CodeExecution execution() {
      return new CodeExecution(results, stdout, stderr, error, count);
    }
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static final List<String> KNOWN = List.of("type", "is_main_result", "text", "html", "markdown", "svg", "png", "jpeg",
      "pdf", "latex", "json", "javascript", "data", "chart", "extra");

  static CodeResult result(JsonNode e) {
    Map<String, String> extra = new LinkedHashMap<>();
    JsonNode x = e.path("extra");
    if (x.isObject()) {
      x.fields().forEachRemaining(f -> extra.put(f.getKey(), f.getValue().isTextual() ? f.getValue().asText() : f.getValue().toString()));
    }
    e.fields().forEachRemaining(f -> {
      if (!KNOWN.contains(f.getKey()) && !f.getValue().isNull()) {
        extra.put(f.getKey(), f.getValue().isTextual() ? f.getValue().asText() : f.getValue().toString());
      }
    });
    JsonNode json = e.get("json");
    return new CodeResult(e.path("is_main_result").asBoolean(false), text(e, "text"), text(e, "html"), text(e, "markdown"),
        text(e, "svg"), bytes(e, "png"), bytes(e, "jpeg"), bytes(e, "pdf"), text(e, "latex"),
        json == null || json.isNull() ? null : json.isTextual() ? json.asText() : json.toString(), text(e, "javascript"),
        data(e.get("data")), chart(e.get("chart")), extra);
  }

  private static @Nullable Map<String, @Nullable Object> data(@Nullable JsonNode node) {
    if (node == null || !node.isObject()) {
      return null;
    }
    @SuppressWarnings("unchecked")
    Map<String, @Nullable Object> map = (Map<String, @Nullable Object>) plain(node);
    return map;
  }

  /** A JSON value as plain, unmodifiable Java: String, Boolean, Long, Double, null, List, Map. */
  private static @Nullable Object plain(JsonNode node) {
    if (node.isTextual()) {
      return node.asText();
    }
    if (node.isBoolean()) {
      return node.asBoolean();
    }
    if (node.isIntegralNumber() && node.canConvertToLong()) {
      return node.asLong();
    }
    if (node.isNumber()) {
      return node.asDouble();
    }
    if (node.isArray()) {
      List<@Nullable Object> list = new ArrayList<>();
      node.forEach(n -> list.add(plain(n)));
      return java.util.Collections.unmodifiableList(list);
    }
    if (node.isObject()) {
      Map<String, @Nullable Object> map = new LinkedHashMap<>();
      node.fields().forEachRemaining(f -> map.put(f.getKey(), plain(f.getValue())));
      return java.util.Collections.unmodifiableMap(map);
    }
    return null;
  }

  /** E2B's chart JSON, typed; an element of a shape its chart type does not have is left out (it stays in the JSON). */
  static @Nullable CodeChart chart(@Nullable JsonNode node) {
    if (node == null || !node.isObject() || node.isEmpty()) {
      return null;
    }
    CodeChart.Type type = CodeChart.Type.of(text(node, "type"));
    List<CodeChart.Element> elements = new ArrayList<>();
    for (JsonNode el : node.path("elements")) {
      CodeChart.Element element = switch (type) {
        case LINE, SCATTER -> el.path("points").isArray() ? new CodeChart.Series(el.path("label").asText(""), points(el.get("points"))) : null;
        case BAR -> el.path("value").isNumber()
            ? new CodeChart.Bar(el.path("label").asText(""), el.path("group").asText(""), el.get("value").asDouble()) : null;
        case PIE -> el.path("angle").isNumber()
            ? new CodeChart.Slice(el.path("label").asText(""), el.get("angle").asDouble(), el.path("radius").asDouble()) : null;
        case BOX_AND_WHISKER -> el.path("median").isNumber() ? box(el) : null;
        case SUPERCHART -> {
          CodeChart sub = chart(el);
          yield sub == null ? null : new CodeChart.Subchart(sub);
        }
        case UNKNOWN -> null;
      };
      if (element != null) {
        elements.add(element);
      }
    }
    return new CodeChart(type, text(node, "title"), text(node, "x_label"), text(node, "y_label"), text(node, "x_unit"),
        text(node, "y_unit"), elements, node.toString());
  }

  private static List<CodeChart.Point> points(JsonNode array) {
    List<CodeChart.Point> out = new ArrayList<>();
    for (JsonNode p : array) {
      out.add(new CodeChart.Point(coordinate(p.get(0)), coordinate(p.get(1))));
    }
    return out;
  }

  private static @Nullable Object coordinate(@Nullable JsonNode v) {
    return v == null || v.isNull() ? null : v.isNumber() ? (Object) v.asDouble() : v.asText();
  }

  private static CodeChart.Box box(JsonNode el) {
    List<Double> outliers = new ArrayList<>();
    el.path("outliers").forEach(o -> outliers.add(o.asDouble()));
    return new CodeChart.Box(el.path("label").asText(""), el.path("min").asDouble(), el.path("first_quartile").asDouble(),
        el.path("median").asDouble(), el.path("third_quartile").asDouble(), el.path("max").asDouble(), outliers);
  }

  private static @Nullable String text(JsonNode e, String field) {
    JsonNode v = e.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static byte @Nullable [] bytes(JsonNode e, String field) {
    String s = text(e, field);
    if (s == null) {
      return null;
    }
    try {
      return Base64.getMimeDecoder().decode(s);
    } catch (IllegalArgumentException notBase64) {
      throw new SandboxException("the code interpreter sent a " + field + " result that is not base64");
    }
  }

  /** Creates a context. */
  public CodeContext create(String language, @Nullable String cwd) {
    ObjectNode body = Json.object().put("language", language);
    if (cwd != null) {
      body.put("cwd", cwd);
    }
    String context = "create a " + language + " code context in sandbox " + sandboxId;
    JsonNode answer = json(request("contexts").POST(HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body))).build(), context);
    return context(answer);
  }

  /** Lists the contexts. */
  public List<CodeContext> list() {
    JsonNode answer = json(request("contexts").GET().build(), "list the code contexts of sandbox " + sandboxId);
    List<CodeContext> out = new ArrayList<>();
    answer.forEach(n -> out.add(context(n)));
    return out;
  }

  /** Restarts a context's kernel. */
  public void restart(String contextId) {
    json(request("contexts/" + URLEncoder.encode(contextId, StandardCharsets.UTF_8) + "/restart")
        .POST(HttpRequest.BodyPublishers.noBody()).build(), "restart code context " + contextId + " in sandbox " + sandboxId);
  }

  /** Removes a context. */
  public void remove(String contextId) {
    json(request("contexts/" + URLEncoder.encode(contextId, StandardCharsets.UTF_8)).DELETE().build(),
        "remove code context " + contextId + " in sandbox " + sandboxId);
  }

  private static CodeContext context(JsonNode n) {
    return new CodeContext(n.path("id").asText(), n.path("language").asText(), n.path("cwd").asText());
  }

  private JsonNode json(HttpRequest req, String context) {
    HttpResponse<byte[]> response = http.send(req, context);
    if (response.statusCode() != 200) {
      throw error(response.statusCode(), response.body(), context);
    }
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new SandboxException(context + ": unreadable answer from the code interpreter", e);
    }
  }

  /** E2B's client mapping: 404 is a missing context, 502 a sandbox (or its interpreter) that is not there. */
  private RuntimeException error(int status, byte[] body, String context) {
    String raw = new String(body, 0, Math.min(body.length, MAX_ERROR_BODY), StandardCharsets.UTF_8).strip();
    String message = raw;
    try {
      JsonNode n = Json.parse(body);
      if (n.isObject() && n.hasNonNull("message")) {
        message = n.path("message").asText();
      }
    } catch (IOException | RuntimeException notJson) {
      // plain text, as the code interpreter answers
    }
    message = Json.abbreviate(message.isEmpty() ? "HTTP " + status : message);
    if (status == 502 && (message.startsWith("The sandbox was not found") || message.startsWith("The sandbox is paused"))) {
      // the proxy's answer for a sandbox it cannot route to (the local server says when it is paused)
      return unreachable.explain(context, message);
    }
    String code = switch (status) {
      case 400 -> "invalid_argument";
      case 404 -> "not_found";
      case 502, 503 -> "unavailable";
      default -> Connect.codeForHttpStatus(status);
    };
    return new SandboxRpcException(code, message, context);
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException ignored) {
      // aborting
    }
  }
}
