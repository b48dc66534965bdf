package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Base64Warmup;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.DirWatch;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.RpcError;
import io.sandboxes.local.internal.SandboxProcess;
import io.sandboxes.local.internal.docker.RawExec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * envd, the in-sandbox daemon, for every local sandbox at one address: requests are routed by the
 * {@code E2b-Sandbox-Id} header (or, for pre-signed file URLs, by whose token signed them) and
 * need that sandbox's access token. Serves {@code /health}, {@code /files} and the Connect RPCs of
 * {@code process.Process} and {@code filesystem.Filesystem}. A request whose {@code E2b-Sandbox-Port}
 * names another port is relayed to that port in the sandbox (the code interpreter's 49999), as
 * E2B's proxy does: with no access token when the sandbox's port traffic is public (E2B's
 * default), and with its {@code e2b-traffic-access-token} when it was created with
 * {@code network.allowPublicTraffic: false} (403 without it, or with another).
 */
public final class EnvdHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(EnvdHandler.class);
  static final String DEFAULT_USER = "user";
  /** envd's own keepalive interval when the client names none. */
  static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(90);

  private final Registry registry;

  private volatile java.util.function.Function<String, java.util.Optional<io.sandboxes.local.internal.TemplateBuilds.Defaults>>
      templateDefaults = t -> java.util.Optional.empty();

  /** Where a built template's default user and working directory for its processes come from. */
  public void templateDefaults(
      java.util.function.Function<String, java.util.Optional<io.sandboxes.local.internal.TemplateBuilds.Defaults>> defaults) {
    this.templateDefaults = defaults;
  }

  public EnvdHandler(Registry registry) {
    Base64Warmup.start(); // output is encoded in few, large calls: see there
    this.registry = registry;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    Exchange ex = new Exchange(request, response, callback);
    try {
      route(ex);
    } catch (RpcError e) {
      if (!ex.completed()) {
        rpcError(ex, e);
      }
    } catch (Exchange.BodyTooLarge e) {
      if (!ex.completed()) {
        ex.tooLarge(e);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("envd {} {} failed", ex.method(), ex.path(), e);
      if (!ex.completed()) {
        rpcError(ex, new RpcError("internal", String.valueOf(e.getMessage())));
      } else {
        ex.abort(e);
      }
    }
    return true;
  }

  private static void rpcError(Exchange ex, RpcError e) {
    ex.json(Connect.httpStatus(e.code()), Json.object().put("code", e.code()).put("message", e.getMessage()));
  }

  private static void restError(Exchange ex, int status, String message) {
    ex.json(status, Json.object().put("code", status).put("message", message));
  }

  private void sandboxMissing(Exchange ex, @Nullable String id) {
    ObjectNode body = Json.object();
    body.put("sandboxId", id == null ? "" : id);
    body.put("message", "The sandbox was not found" + (id == null ? "" : registry.stoppedReason(id).map(r -> ": " + r).orElse("")));
    body.put("code", 502);
    ex.json(502, body);
  }

  /**
   * The answer for a sandbox that cannot take the call: 502, as E2B's proxy answers, whose message
   * says "paused" for a sandbox that is there but paused (E2B's says "not found" for both; the
   * status stays, so E2B's SDKs read it as they read E2B's).
   */
  private void unreachable(Exchange ex, @Nullable String id, @Nullable LocalSandbox sandbox) {
    if (sandbox == null || !sandbox.paused()) {
      sandboxMissing(ex, id);
      return;
    }
    ObjectNode body = Json.object();
    body.put("sandboxId", sandbox.id());
    body.put("message", sandbox.lifecycle().autoResume()
        ? "The sandbox is paused, and resuming it for this call failed: connect to it (Sandbox.connect) to resume it"
        : "The sandbox is paused: connect to it (Sandbox.connect) to resume it; it was not created with autoResume, so a call"
            + " does not wake it");
    body.put("code", 502);
    ex.json(502, body);
  }

  private void route(Exchange ex) throws RpcError, IOException {
    String path = ex.path();
    String id = ex.header("E2b-Sandbox-Id");
    LocalSandbox sandbox = id == null ? null : registry.find(id).orElse(null);
    int port = sandboxPort(ex);
    if (port != ENVD_PORT) {
      if (sandbox == null) {
        sandboxMissing(ex, id);
        return;
      }
      // checked before anything else is done for the request: an unauthorised one resumes nothing
      String refused = trafficRefusal(ex, sandbox);
      if (refused != null) {
        ex.json(403, Json.object().put("sandboxId", sandbox.id()).put("message", refused).put("code", 403));
        return;
      }
      if (!awake(sandbox)) {
        unreachable(ex, id, sandbox);
        return;
      }
      SandboxPortProxy.relay(ex, sandbox, port);
      return;
    }
    if (path.equals("/files")) {
      files(ex, sandbox, id);
      return;
    }
    if (sandbox == null || !awake(sandbox)) {
      unreachable(ex, id, sandbox);
      return;
    }
    if (path.equals("/health")) {
      ex.empty(204);
      return;
    }
    if (!tokenMatches(ex, sandbox)) {
      restError(ex, 401, "unauthorized access, please provide a valid access token or method signing if supported");
      return;
    }
    if (!ex.method().equals("POST")) {
      restError(ex, 405, "method " + ex.method() + " is not allowed on " + path);
      return;
    }
    sandbox.checkNotFrozen(); // its daemon cannot answer: every call says so at once rather than waiting
    switch (path) {
      case "/process.Process/Start" -> start(ex, sandbox);
      case "/process.Process/Connect" -> connect(ex, sandbox);
      case "/process.Process/List" -> listProcesses(ex, sandbox);
      case "/process.Process/SendInput" -> sendInput(ex, sandbox);
      case "/process.Process/SendSignal" -> sendSignal(ex, sandbox);
      case "/process.Process/CloseStdin" -> closeStdin(ex, sandbox);
      case "/process.Process/Update" -> update(ex, sandbox);
      case "/filesystem.Filesystem/Stat" -> {
        JsonNode req = unaryRequest(ex);
        reply(ex, entry(sandbox.files().stat(user(ex), requirePath(req, "path"))));
      }
      case "/filesystem.Filesystem/ListDir" -> {
        JsonNode req = unaryRequest(ex);
        int depth = Json.intValue(req, "depth", 1);
        ObjectNode out = Json.object();
        out.set("entries", sandbox.files().list(user(ex), requirePath(req, "path"), Math.max(depth, 1)));
        reply(ex, out);
      }
      case "/filesystem.Filesystem/MakeDir" -> {
        JsonNode req = unaryRequest(ex);
        reply(ex, entry(sandbox.files().makeDir(user(ex), requirePath(req, "path"))));
      }
      case "/filesystem.Filesystem/Move" -> {
        JsonNode req = unaryRequest(ex);
        reply(ex, entry(sandbox.files().move(user(ex), requirePath(req, "source"), requirePath(req, "destination"))));
      }
      case "/filesystem.Filesystem/Remove" -> {
        JsonNode req = unaryRequest(ex);
        sandbox.files().remove(user(ex), requirePath(req, "path"));
        reply(ex, Json.object());
      }
      case "/filesystem.Filesystem/WatchDir" -> watchDir(ex, sandbox);
      case "/filesystem.Filesystem/CreateWatcher" -> {
        JsonNode req = unaryRequest(ex);
        String dir = watchableDir(sandbox, user(ex), req);
        String watcherId = sandbox.addWatcher(user(ex), dir, req.path("recursive").asBoolean(false));
        reply(ex, Json.object().put("watcherId", watcherId));
      }
      case "/filesystem.Filesystem/GetWatcherEvents" -> {
        JsonNode req = unaryRequest(ex);
        String watcherId = Json.text(req, "watcherId");
        DirWatch w = watcherId == null ? null : sandbox.watcher(watcherId);
        if (w == null) {
          throw new RpcError("not_found", "watcher " + watcherId + " not found");
        }
        ObjectNode out = Json.object();
        ArrayNode events = out.putArray("events");
        for (DirWatch.Change c : w.drain()) {
          events.addObject().put("name", c.name()).put("type", c.type());
        }
        reply(ex, out);
      }
      case "/filesystem.Filesystem/RemoveWatcher" -> {
        JsonNode req = unaryRequest(ex);
        String watcherId = Json.text(req, "watcherId");
        if (watcherId == null || !sandbox.removeWatcher(watcherId)) {
          throw new RpcError("not_found", "watcher " + watcherId + " not found");
        }
        reply(ex, Json.object());
      }
      default -> throw new RpcError("unimplemented", "not implemented by the local runtime: " + path);
    }
  }

  /** The port envd's clients name in {@code E2b-Sandbox-Port}; any other port is the sandbox's own. */
  static final int ENVD_PORT = 49983;

  /** The port a request is for: {@code E2b-Sandbox-Port}, envd's when absent. */
  private static int sandboxPort(Exchange ex) throws RpcError {
    String raw = ex.header("E2b-Sandbox-Port");
    if (raw == null || raw.isBlank()) {
      return ENVD_PORT;
    }
    try {
      int port = Integer.parseInt(raw.strip());
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new RpcError("invalid_argument", "E2b-Sandbox-Port must be a port number, got '" + Json.abbreviate(raw) + "'");
  }

  /** A paused sandbox answers only when it resumes on traffic ({@code autoResume}). */
  private boolean awake(LocalSandbox sandbox) {
    if (!sandbox.paused()) {
      return true;
    }
    if (!sandbox.lifecycle().autoResume()) {
      return false;
    }
    try {
      registry.resume(sandbox, Duration.ofSeconds(sandbox.lifecycle().timeoutSeconds()));
      return true;
    } catch (RpcError e) {
      LOG.warn("automatic resume of sandbox {} failed: {}", sandbox.id(), e.getMessage());
      return false;
    }
  }

  private static ObjectNode entry(ObjectNode entry) {
    ObjectNode out = Json.object();
    out.set("entry", entry);
    return out;
  }

  private static void reply(Exchange ex, JsonNode body) {
    ex.bytes(200, Connect.UNARY_CONTENT_TYPE, Json.bytes(body));
  }

  /** Why a request to a sandbox's port is refused for its traffic token, or null when it may pass. */
  private static @Nullable String trafficRefusal(Exchange ex, LocalSandbox sandbox) {
    String expected = sandbox.trafficAccessToken();
    if (expected == null) {
      return null; // public port traffic
    }
    String given = ex.header(SandboxPortProxy.TRAFFIC_TOKEN_HEADER);
    if (given == null || given.isEmpty()) {
      return "the sandbox's port traffic needs its traffic access token, and the " + SandboxPortProxy.TRAFFIC_TOKEN_HEADER
          + " header is missing";
    }
    if (!MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8), expected.getBytes(StandardCharsets.UTF_8))) {
      return "the " + SandboxPortProxy.TRAFFIC_TOKEN_HEADER + " header does not hold the sandbox's traffic access token";
    }
    return null;
  }

  private static boolean tokenMatches(Exchange ex, LocalSandbox sandbox) {
    String token = ex.header("X-Access-Token");
    return token != null && MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
        sandbox.envdToken().getBytes(StandardCharsets.UTF_8));
  }

  /** The user from {@code Authorization: Basic base64(user:)}, or the sandbox's default user. */
  private static String user(Exchange ex) throws RpcError {
    String auth = ex.header("Authorization");
    if (auth == null || auth.isBlank()) {
      return DEFAULT_USER;
    }
    if (!auth.regionMatches(true, 0, "Basic ", 0, 6)) {
      throw new RpcError("unauthenticated", "unsupported Authorization scheme");
    }
    try {
      String decoded = new String(Base64.getDecoder().decode(auth.substring(6).strip()), StandardCharsets.UTF_8);
      String name = decoded.contains(":") ? decoded.substring(0, decoded.indexOf(':')) : decoded;
      return checkUser(name);
    } catch (IllegalArgumentException e) {
      throw new RpcError("unauthenticated", "malformed Authorization header");
    }
  }

  private static String checkUser(String name) throws RpcError {
    if (name.isEmpty()) {
      return DEFAULT_USER;
    }
    if (!name.matches("[a-z_][a-z0-9_-]{0,31}")) {
      throw new RpcError("unauthenticated", "invalid user: '" + name + "'");
    }
    return name;
  }

  private static String requirePath(JsonNode req, String field) throws RpcError {
    String p = Json.text(req, field);
    if (p == null || p.isEmpty()) {
      throw new RpcError("invalid_argument", "'" + field + "' is required");
    }
    return p;
  }

  private static JsonNode unaryRequest(Exchange ex) throws RpcError, IOException {
    String type = ex.header("Content-Type");
    if (type == null || !type.startsWith(Connect.UNARY_CONTENT_TYPE)) {
      throw new RpcError("invalid_argument", "unary calls take Content-Type application/json, got " + type);
    }
    return parseObject(ex.bodyBytes());
  }

  private static JsonNode parseObject(byte[] raw) throws RpcError {
    try {
      JsonNode n = Json.parse(raw);
      if (!n.isObject()) {
        throw new RpcError("invalid_argument", "the request message must be a JSON object");
      }
      return n;
    } catch (IOException e) {
      throw new RpcError("invalid_argument", "the request message is not valid JSON");
    }
  }

  private static JsonNode streamRequest(Exchange ex) throws RpcError, IOException {
    String type = ex.header("Content-Type");
    if (type == null || !type.startsWith(Connect.STREAM_CONTENT_TYPE)) {
      throw new RpcError("invalid_argument", "streaming calls take Content-Type application/connect+json, got " + type);
    }
    try (InputStream in = ex.body()) {
      Connect.Envelope env = Connect.read(in);
      if (env == null) {
        throw new RpcError("invalid_argument", "the request has no message");
      }
      return parseObject(env.payload());
    }
  }

  // ---- watching ----

  /** Checks the watch request and returns the folder's absolute path. */
  private static String watchableDir(LocalSandbox sandbox, String user, JsonNode req) throws RpcError {
    String path = requirePath(req, "path");
    ObjectNode entry = sandbox.files().stat(user, path);
    if (!"FILE_TYPE_DIRECTORY".equals(entry.path("type").asText())) {
      throw new RpcError("invalid_argument", "path '" + path + "' is not a directory");
    }
    return entry.path("path").asText();
  }

  private void watchDir(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = streamRequest(ex);
    String user = user(ex);
    Duration timeout = timeoutHeader(ex);
    Duration keepalive = keepalive(ex);
    boolean includeEntry = req.path("includeEntry").asBoolean(false);
    DirWatch watch;
    try {
      watch = sandbox.watch(user, watchableDir(sandbox, user, req), req.path("recursive").asBoolean(false));
    } catch (RpcError e) {
      streamError(ex, e);
      return;
    }
    long deadline = timeout.isZero() ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    OutputStream out = ex.stream(200, Connect.STREAM_CONTENT_TYPE);
    try (watch) {
      ObjectNode start = Json.object();
      start.putObject("start");
      writeMessage(out, start);
      long lastSent = System.nanoTime();
      while (true) {
        long now = System.nanoTime();
        if (now >= deadline) {
          ObjectNode end = Json.object();
          end.putObject("error").put("code", "deadline_exceeded").put("message", "the watch reached its deadline");
          out.write(Connect.envelope(Connect.FLAG_END_STREAM, Json.bytes(end)));
          ex.finish(out);
          return;
        }
        if (watch.ended()) {
          ObjectNode end = Json.object();
          end.putObject("error").put("code", "not_found").put("message", "the watched folder " + watch.root() + " went away");
          out.write(Connect.envelope(Connect.FLAG_END_STREAM, Json.bytes(end)));
          ex.finish(out);
          return;
        }
        long wait = Math.min(Math.min(deadline - now, keepalive.toNanos()), Duration.ofMillis(500).toNanos());
        DirWatch.Change c = watch.next(wait, TimeUnit.NANOSECONDS);
        if (c != null) {
          ObjectNode msg = Json.object();
          ObjectNode fs = msg.putObject("filesystem").put("name", c.name()).put("type", c.type());
          if (includeEntry && !c.type().equals("EVENT_TYPE_REMOVE") && !c.type().equals("EVENT_TYPE_RENAME")) {
            try {
              fs.set("entry", sandbox.files().stat(user, watch.root() + "/" + c.name()));
            } catch (RpcError gone) {
              // the file went away before it could be read: the event stands without its entry
            }
          }
          writeMessage(out, msg);
          lastSent = System.nanoTime();
        } else if (System.nanoTime() - lastSent >= keepalive.toNanos()) {
          ObjectNode ka = Json.object();
          ka.putObject("keepalive");
          writeMessage(out, ka);
          lastSent = System.nanoTime();
        }
      }
    } catch (IOException e) {
      ex.abort(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ex.abort(e);
    }
  }

  // ---- processes ----

  private static Duration timeoutHeader(Exchange ex) throws RpcError {
    String raw = ex.header(Connect.TIMEOUT_HEADER);
    if (raw == null || raw.isBlank()) {
      return Duration.ZERO;
    }
    try {
      long ms = Long.parseLong(raw.strip());
      if (ms < 0) {
        throw new NumberFormatException();
      }
      return Duration.ofMillis(ms);
    } catch (NumberFormatException e) {
      throw new RpcError("invalid_argument", "invalid " + Connect.TIMEOUT_HEADER + ": " + raw);
    }
  }

  private static Duration keepalive(Exchange ex) {
    String raw = ex.header(Connect.KEEPALIVE_HEADER);
    if (raw != null) {
      try {
        long s = Long.parseLong(raw.strip());
        if (s > 0) {
          return Duration.ofSeconds(Math.min(s, 3600));
        }
      } catch (NumberFormatException ignored) {
        // fall back to envd's default
      }
    }
    return DEFAULT_KEEPALIVE;
  }

  private void start(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = streamRequest(ex);
    String user = user(ex);
    Duration timeout = timeoutHeader(ex);
    JsonNode process = req.path("process");
    // a built template's USER and WORKDIR are its processes' defaults, as on E2B
    java.util.Optional<io.sandboxes.local.internal.TemplateBuilds.Defaults> defaults = templateDefaults.apply(sandbox.templateId());
    String cwd = Json.text(process, "cwd");
    if (defaults.isPresent()) {
      if (ex.header("Authorization") == null || ex.header("Authorization").isBlank()) {
        user = defaults.get().user();
      }
      if (cwd == null || cwd.isEmpty()) {
        cwd = defaults.get().workdir();
      }
    }
    String cmd = Json.text(process, "cmd");
    if (cmd == null || cmd.isEmpty()) {
      streamError(ex, new RpcError("invalid_argument", "'process.cmd' is required"));
      return;
    }
    List<String> args = new ArrayList<>();
    process.path("args").forEach(a -> args.add(a.asText()));
    Map<String, String> envs = new LinkedHashMap<>(sandbox.envVars());
    envs.putAll(Json.stringMap(process.get("envs")));
    JsonNode size = req.path("pty").path("size");
    boolean pty = req.has("pty") && !req.get("pty").isNull();
    boolean stdin = !req.has("stdin") || req.get("stdin").asBoolean(true);
    LocalSandbox.StartSpec spec = new LocalSandbox.StartSpec(user, cmd, args, envs, cwd,
        Json.text(req, "tag"), pty, size.path("cols").asInt(0), size.path("rows").asInt(0), stdin, timeout);
    SandboxProcess.Subscriber[] sub = new SandboxProcess.Subscriber[1];
    SandboxProcess p;
    try {
      p = sandbox.start(spec, sub);
    } catch (RpcError e) {
      streamError(ex, e);
      return;
    }
    follow(ex, p, sub[0], keepalive(ex));
  }

  private void connect(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = streamRequest(ex);
    SandboxProcess p;
    try {
      p = select(sandbox, req.path("process"));
    } catch (RpcError e) {
      streamError(ex, e);
      return;
    }
    follow(ex, p, p.subscribe(), keepalive(ex));
  }

  private static SandboxProcess select(LocalSandbox sandbox, JsonNode selector) throws RpcError {
    if (selector.has("pid")) {
      int pid = Json.intValue(selector, "pid", -1);
      SandboxProcess p = sandbox.process(pid);
      if (p == null) {
        throw new RpcError("not_found", "process with pid " + pid + " not found");
      }
      return p;
    }
    if (selector.has("tag")) {
      String tag = selector.get("tag").asText();
      SandboxProcess p = sandbox.processByTag(tag);
      if (p == null) {
        throw new RpcError("not_found", "process with tag " + tag + " not found");
      }
      return p;
    }
    throw new RpcError("invalid_argument", "the process selector needs a pid or a tag");
  }

  private static void streamError(Exchange ex, RpcError e) {
    ObjectNode end = Json.object();
    end.putObject("error").put("code", e.code()).put("message", e.getMessage());
    ex.bytes(200, Connect.STREAM_CONTENT_TYPE, Connect.envelope(Connect.FLAG_END_STREAM, Json.bytes(end)));
  }

  /** Streams a process's events to the client until it ends, the deadline fails it, or the client leaves. */
  private static void follow(Exchange ex, SandboxProcess p, SandboxProcess.Subscriber sub, Duration keepalive) {
    OutputStream out = ex.stream(200, Connect.STREAM_CONTENT_TYPE);
    try {
      ObjectNode start = Json.object();
      start.putObject("event").putObject("start").put("pid", p.pid());
      writeMessage(out, start);
      while (true) {
        SandboxProcess.Event e = sub.poll(keepalive.toMillis(), TimeUnit.MILLISECONDS);
        if (e == null) {
          ObjectNode ka = Json.object();
          ka.putObject("event").putObject("keepalive");
          writeMessage(out, ka);
          continue;
        }
        switch (e) {
          case SandboxProcess.Data d -> {
            writeData(out, d.stream(), d.buf(), d.off(), d.len());
            out.flush();
          }
          case SandboxProcess.End end -> {
            ObjectNode msg = Json.object();
            ObjectNode endJson = msg.putObject("event").putObject("end");
            if (end.exitCode() != 0) {
              endJson.put("exitCode", end.exitCode());
            }
            if (end.exited()) {
              endJson.put("exited", true);
            }
            endJson.put("status", end.status());
            if (end.error() != null) {
              endJson.put("error", end.error());
            }
            writeMessage(out, msg);
            out.write(Connect.envelope(Connect.FLAG_END_STREAM, "{}".getBytes(StandardCharsets.UTF_8)));
            ex.finish(out);
            return;
          }
          case SandboxProcess.Severed s -> {
            p.unsubscribe(sub);
            ex.abort(new IOException(s.why()));
            return;
          }
          case SandboxProcess.Failure f -> {
            ObjectNode endMsg = Json.object();
            endMsg.putObject("error").put("code", f.code()).put("message", f.message());
            out.write(Connect.envelope(Connect.FLAG_END_STREAM, Json.bytes(endMsg)));
            ex.finish(out);
            return;
          }
        }
      }
    } catch (IOException e) {
      // the client went away; the process goes on, as envd's do
      p.unsubscribe(sub);
      ex.abort(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.unsubscribe(sub);
      ex.abort(e);
    }
  }

  private static final byte[] STDOUT_HEAD = "{\"event\":{\"data\":{\"stdout\":\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] STDERR_HEAD = "{\"event\":{\"data\":{\"stderr\":\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PTY_HEAD = "{\"event\":{\"data\":{\"pty\":\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DATA_TAIL = "\"}}}".getBytes(StandardCharsets.US_ASCII);

  /**
   * One output chunk as a whole Connect envelope: the JSON is fixed text around the base64 (which
   * needs no escaping), so no JSON tree is built per chunk, and the encoded bytes are written as
   * they are, not copied into a message first.
   */
  static void writeData(OutputStream out, RawExec.Stream stream, byte[] buf, int off, int len) throws IOException {
    byte[] head = stream == RawExec.Stream.STDERR ? STDERR_HEAD : stream == RawExec.Stream.TTY ? PTY_HEAD : STDOUT_HEAD;
    ByteBuffer encoded = Base64.getEncoder().encode(ByteBuffer.wrap(buf, off, len));
    int b64 = encoded.remaining();
    int msgLen = head.length + b64 + DATA_TAIL.length;
    byte[] start = new byte[5 + head.length];
    start[1] = (byte) (msgLen >>> 24);
    start[2] = (byte) (msgLen >>> 16);
    start[3] = (byte) (msgLen >>> 8);
    start[4] = (byte) msgLen;
    System.arraycopy(head, 0, start, 5, head.length);
    out.write(start);
    out.write(encoded.array(), encoded.arrayOffset() + encoded.position(), b64);
    out.write(DATA_TAIL);
  }

  private static void writeMessage(OutputStream out, JsonNode message) throws IOException {
    out.write(Connect.envelope(0, Json.bytes(message)));
    out.flush();
  }

  private static void listProcesses(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    unaryRequest(ex);
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("processes");
    for (SandboxProcess p : sandbox.running()) {
      ObjectNode info = list.addObject();
      ObjectNode config = info.putObject("config").put("cmd", p.cmd());
      ArrayNode args = config.putArray("args");
      p.args().forEach(args::add);
      config.set("envs", Json.toObject(p.envs()));
      if (p.cwd() != null) {
        config.put("cwd", p.cwd());
      }
      info.put("pid", p.pid());
      if (p.tag() != null) {
        info.put("tag", p.tag());
      }
    }
    reply(ex, out);
  }

  private static SandboxProcess running(LocalSandbox sandbox, JsonNode req) throws RpcError {
    SandboxProcess p = select(sandbox, req.path("process"));
    if (p.end() != null) {
      throw new RpcError("not_found", "process with pid " + p.pid() + " has exited");
    }
    return p;
  }

  private static void sendInput(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = unaryRequest(ex);
    SandboxProcess p = running(sandbox, req);
    JsonNode input = req.path("input");
    String b64 = input.has("pty") ? input.get("pty").asText() : input.path("stdin").asText("");
    byte[] data;
    try {
      data = Base64.getDecoder().decode(b64);
    } catch (IllegalArgumentException e) {
      data = Base64.getUrlDecoder().decode(b64);
    }
    try {
      p.writeInput(data);
    } catch (IOException e) {
      throw new RpcError("failed_precondition", "stdin of process " + p.pid() + " is closed");
    }
    reply(ex, Json.object());
  }

  private static void sendSignal(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = unaryRequest(ex);
    SandboxProcess p = running(sandbox, req);
    JsonNode sig = req.path("signal");
    int signal = switch (sig.isNumber() ? Integer.toString(sig.asInt()) : sig.asText("")) {
      case "SIGNAL_SIGKILL", "9" -> 9;
      case "SIGNAL_SIGTERM", "15" -> 15;
      default -> throw new RpcError("invalid_argument", "unsupported signal " + sig);
    };
    sandbox.signal(p, signal);
    reply(ex, Json.object());
  }

  private static void closeStdin(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = unaryRequest(ex);
    SandboxProcess p = running(sandbox, req);
    if (p.pty()) {
      throw new RpcError("failed_precondition", "a PTY has no stdin to close; send Ctrl-D (0x04) as input instead");
    }
    p.closeInput();
    reply(ex, Json.object());
  }

  private static void update(Exchange ex, LocalSandbox sandbox) throws RpcError, IOException {
    JsonNode req = unaryRequest(ex);
    SandboxProcess p = running(sandbox, req);
    JsonNode size = req.path("pty").path("size");
    if (!p.pty()) {
      throw new RpcError("failed_precondition", "process " + p.pid() + " has no PTY to resize");
    }
    if (size.path("cols").asInt(0) < 1 || size.path("rows").asInt(0) < 1) {
      throw new RpcError("invalid_argument", "pty.size needs cols and rows of at least 1");
    }
    sandbox.resize(p, size.get("cols").asInt(), size.get("rows").asInt());
    reply(ex, Json.object());
  }

  // ---- files ----

  private void files(Exchange ex, @Nullable LocalSandbox sandbox, @Nullable String id) throws IOException {
    String path = ex.query("path");
    String username = ex.query("username");
    String signature = ex.query("signature");
    boolean read = ex.method().equals("GET");
    if (!read && !ex.method().equals("POST")) {
      restError(ex, 405, "method " + ex.method() + " is not allowed on /files");
      return;
    }
    String op = read ? "read" : "write";
    String expiration = ex.query("signature_expiration");
    if (sandbox == null && signature != null && id == null) {
      // the signature names the sandbox: its token is in the hash, whether or not it has expired
      sandbox = registry.bySignature(s -> signed(s, path, op, username, signature, expiration) != Signed.INVALID).orElse(null);
    }
    if (sandbox == null || !awake(sandbox)) {
      ex.discardSmallBody();
      unreachable(ex, id, sandbox);
      return;
    }
    if (!tokenMatches(ex, sandbox)) {
      Signed signed = signature == null ? Signed.INVALID : signed(sandbox, path, op, username, signature, expiration);
      if (signed != Signed.VALID) {
        ex.discardSmallBody();
      }
      if (signed == Signed.EXPIRED) {
        restError(ex, 401, "signature is already expired");
        return;
      }
      if (signed != Signed.VALID) {
        restError(ex, 401, "unauthorized access, please provide a valid access token or method signing if supported");
        return;
      }
    }
    String user;
    try {
      user = checkUser(username == null ? "" : username);
    } catch (RpcError e) {
      restError(ex, 401, e.getMessage());
      return;
    }
    try {
      if (read) {
        if (path == null || path.isEmpty()) {
          restError(ex, 400, "the 'path' query parameter is required");
          return;
        }
        OutputStream[] body = new OutputStream[1];
        try {
          sandbox.files().read(user, path, () -> body[0] = ex.stream(200, "application/octet-stream"));
        } catch (IOException e) {
          if (body[0] == null) {
            throw e;
          }
          ex.abort(e); // the client sees a broken answer, never a short file that looks whole
          return;
        }
        ex.finish(body[0]);
      } else {
        writeFiles(ex, sandbox, user, path);
      }
    } catch (RpcError e) {
      int status = switch (e.code()) {
        case "not_found" -> 404;
        case "invalid_argument" -> 400;
        case "unauthenticated" -> 401;
        case "permission_denied" -> 403;
        case "unavailable" -> 502;
        case "resource_exhausted" -> 507; // envd's "not enough space"
        case "unimplemented" -> 501; // e.g. file metadata where the sandbox's file system has no extended attributes
        default -> 500;
      };
      if (!ex.completed()) {
        restError(ex, status, e.getMessage());
      }
    }
  }

  private void writeFiles(Exchange ex, LocalSandbox sandbox, String user, @Nullable String path) throws RpcError, IOException {
    String type = ex.header("Content-Type");
    ArrayNode written = Json.array();
    java.util.Map<String, String> metadata;
    try {
      metadata = uploadMetadata(ex.request.getHeaders());
    } catch (IllegalArgumentException e) {
      restError(ex, 400, e.getMessage());
      return;
    }
    if (type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("multipart/form-data")) {
      String boundary = MultiPart.extractBoundary(type);
      if (boundary == null || boundary.isEmpty()) {
        restError(ex, 400, "a multipart upload needs a boundary in its Content-Type");
        return;
      }
      Set<String> targets = new HashSet<>();
      try {
        // each part goes to the sandbox as it arrives: nothing is spooled, on disk or in memory
        MultipartUpload.read(ex.body(), boundary, new MultipartUpload.PartWriter() {
          @Override
          public @Nullable String target(@Nullable String name, @Nullable String fileName) {
            String target = path != null && !path.isEmpty() ? path : fileName;
            return target == null || target.isEmpty() || !targets.add(target) ? null : target;
          }

          @Override
          public String refusal(@Nullable String name, @Nullable String fileName) {
            String target = path != null && !path.isEmpty() ? path : fileName;
            return target == null || target.isEmpty() ? "a file part has no target path (no 'path' parameter and no filename)"
                : "two parts write the same path " + target;
          }

          @Override
          public void write(String target, InputStream content) throws RpcError {
            ObjectNode entry = writtenEntry(sandbox.files().write(user, target, content, metadata));
            synchronized (written) {
              written.add(entry);
            }
          }
        });
      } catch (MultipartUpload.Malformed e) {
        restError(ex, 400, e.getMessage());
        return;
      } catch (RpcError | IOException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException("an upload failed: " + e, e);
      }
    } else {
      if (path == null || path.isEmpty()) {
        restError(ex, 400, "the 'path' query parameter is required for a raw upload");
        return;
      }
      InputStream body = ex.body();
      if ("gzip".equalsIgnoreCase(ex.header("Content-Encoding"))) {
        body = new java.util.zip.GZIPInputStream(body);
      }
      try (InputStream in = body) {
        written.add(writtenEntry(sandbox.files().write(user, path, in, metadata)));
      }
    }
    if (written.isEmpty()) {
      restError(ex, 400, "the upload held no file");
      return;
    }
    ex.json(200, written);
  }

  /** An upload's answer for one file: envd's {@code path}, {@code name}, {@code type} and its metadata. */
  private static ObjectNode writtenEntry(ObjectNode entry) {
    String absolute = entry.path("path").asText();
    ObjectNode out = Json.object()
        .put("path", absolute)
        .put("name", absolute.substring(absolute.lastIndexOf('/') + 1))
        .put("type", "file");
    if (entry.has("metadata")) {
      out.set("metadata", entry.get("metadata"));
    }
    return out;
  }

  private static final String METADATA_HEADER = "x-metadata-";
  /** The Linux limit on an xattr name (255) less envd's {@code user.e2b.} namespace. */
  private static final int METADATA_KEY_MAX = 255 - "user.e2b.".length();
  /** envd's budget for all of a file's metadata, each key counted with its namespace. */
  private static final int METADATA_TOTAL_MAX = 4096;

  /**
   * envd's upload metadata: every {@code X-Metadata-<key>: <value>} header, the key lowercased,
   * the first value of a repeated header. Keys and values must be printable US-ASCII, a key at
   * most 246 bytes, all of it at most 4096 bytes.
   *
   * @throws IllegalArgumentException naming what is wrong, for a 400
   */
  static java.util.Map<String, String> uploadMetadata(org.eclipse.jetty.http.HttpFields headers) {
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
    int total = 0;
    for (org.eclipse.jetty.http.HttpField h : headers) {
      String name = h.getName();
      if (name.length() <= METADATA_HEADER.length() || !name.regionMatches(true, 0, METADATA_HEADER, 0, METADATA_HEADER.length())) {
        continue;
      }
      String key = name.substring(METADATA_HEADER.length()).toLowerCase(java.util.Locale.ROOT);
      String value = h.getValue() == null ? "" : h.getValue();
      if (!printable(key) || !printable(value)) {
        throw new IllegalArgumentException("metadata keys and values must be printable US-ASCII: " + name);
      }
      if (key.length() > METADATA_KEY_MAX) {
        throw new IllegalArgumentException("metadata key longer than " + METADATA_KEY_MAX + " bytes: " + name);
      }
      if (out.putIfAbsent(key, value) == null) {
        total += "user.e2b.".length() + key.length() + value.length();
        if (total > METADATA_TOTAL_MAX) {
          throw new IllegalArgumentException("metadata larger than " + METADATA_TOTAL_MAX + " bytes in all");
        }
      }
    }
    return out;
  }

  private static boolean printable(String s) {
    return s.chars().allMatch(c -> c >= 0x20 && c <= 0x7E);
  }

  /** What a pre-signed URL's signature is worth for a sandbox. */
  enum Signed {
    /** made with this sandbox's token, and not expired */
    VALID,
    /** made with this sandbox's token, but its expiration has passed */
    EXPIRED,
    /** not made with this sandbox's token (or malformed) */
    INVALID
  }

  /**
   * envd's pre-signed URL check: v1_ + base64(sha256(path:op:user:token[:expiration])), no
   * padding. The expiration is part of the hash, so a signature that matches has its own
   * expiration, and a past one is told apart from a signature that is simply wrong. No
   * {@code path} signs as the empty path, as envd reads it: the SDKs' {@code uploadUrl()} without
   * a path signs "" for an upload whose parts name their own paths.
   */
  static Signed signed(LocalSandbox s, @Nullable String path, String op, @Nullable String username,
      String signature, @Nullable String expiration) {
    String raw = (path == null ? "" : path) + ":" + op + ":" + (username == null ? "" : username) + ":" + s.envdToken();
    Instant expires = null;
    if (expiration != null && !expiration.isEmpty()) {
      try {
        expires = Instant.ofEpochSecond(Long.parseLong(expiration));
      } catch (NumberFormatException | java.time.DateTimeException e) {
        return Signed.INVALID;
      }
      raw += ":" + expiration;
    }
    boolean matches;
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
      String expected = "v1_" + Base64.getEncoder().withoutPadding().encodeToString(digest);
      matches = MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), signature.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    if (!matches) {
      return Signed.INVALID;
    }
    return expires != null && expires.isBefore(Instant.now()) ? Signed.EXPIRED : Signed.VALID;
  }

}
