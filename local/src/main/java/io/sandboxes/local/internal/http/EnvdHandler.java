package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.EnvdCalls.restError;
import static io.sandboxes.local.internal.http.EnvdCalls.rpcError;

import io.sandboxes.e2b.internal.Base64Warmup;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.TemplateBuilds;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * envd, the in-sandbox daemon, for every local sandbox at one address: requests are routed by the
 * {@code E2b-Sandbox-Id} header, or without it by E2B's host name {@code <port>-<id>.<domain>}
 * (or, for pre-signed file URLs, by whose token signed them) and
 * need that sandbox's access token. A request whose {@code E2b-Sandbox-Port} names another port
 * goes to that port ({@link SandboxPortProxy}); {@code /files} up and down is {@link FilesApi};
 * {@code /health} answers; every other path is a Connect call, POST only, found in one table of
 * the {@code process.Process} calls ({@link ProcessRpcs}) and the {@code filesystem.Filesystem}
 * ones ({@link FilesystemRpcs}).
 */
public final class EnvdHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(EnvdHandler.class);
  /** E2B's host name for a sandbox's port: {@code <port>-<sandbox id>.<domain>}. */
  private static final java.util.regex.Pattern PREVIEW_HOST = java.util.regex.Pattern.compile("(\\d{1,5})-([a-z0-9]{20})\\.");
  /** The port envd's clients name in {@code E2b-Sandbox-Port}; any other port is the sandbox's own. */
  static final int ENVD_PORT = 49983;

  private final Registry registry;
  private final EnvdAccess access;
  private final FilesApi files;
  /** The Connect calls by path. */
  private final Map<String, EnvdCalls.Call> calls;

  private volatile Function<String, Optional<TemplateBuilds.Defaults>> templateDefaults = t -> Optional.empty();

  /** Where a built template's default user and working directory for its processes come from. */
  public void templateDefaults(Function<String, Optional<TemplateBuilds.Defaults>> defaults) {
    this.templateDefaults = defaults;
  }

  public EnvdHandler(Registry registry) {
    Base64Warmup.start(); // output is encoded in few, large calls: see there
    this.registry = registry;
    this.access = new EnvdAccess(registry);
    this.files = new FilesApi(access);
    Map<String, EnvdCalls.Call> table = new LinkedHashMap<>();
    new ProcessRpcs(() -> templateDefaults).routes(table);
    FilesystemRpcs.routes(table);
    this.calls = Map.copyOf(table);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    // a call lasts until its answer is complete (a streamed one goes on after this returns)
    Runnable ended = registry.callBegins();
    Callback answered = new Callback() {
      @Override
      public void succeeded() {
        ended.run();
        callback.succeeded();
      }

      @Override
      public void failed(Throwable x) {
        ended.run();
        callback.failed(x);
      }

      @Override
      public InvocationType getInvocationType() {
        return callback.getInvocationType();
      }
    };
    Exchange ex = new Exchange(request, response, answered);
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

  private void route(Exchange ex) throws RpcError, IOException {
    String path = ex.path();
    String id = ex.header("E2b-Sandbox-Id");
    int port;
    java.util.regex.Matcher byHost = PREVIEW_HOST.matcher(String.valueOf(ex.request.getHttpURI().getHost()));
    if (id == null && byHost.lookingAt()) {
      // E2B's host name for a sandbox's port, <port>-<sandbox id>.<domain>, as getHost(port) builds it
      id = byHost.group(2);
      port = Integer.parseInt(byHost.group(1));
      if (port < 1 || port > 65535) {
        throw new RpcError("invalid_argument", "the host name names port " + port + ", not a port number");
      }
    } else {
      port = sandboxPort(ex);
    }
    LocalSandbox sandbox = id == null ? null : registry.find(id).orElse(null);
    if (port != ENVD_PORT) {
      if (sandbox == null) {
        access.sandboxMissing(ex, id);
        return;
      }
      // checked before anything else is done for the request: an unauthorised one resumes nothing
      String refused = SandboxPortProxy.trafficRefusal(ex, sandbox);
      if (refused != null) {
        ex.json(403, Json.object().put("sandboxId", sandbox.id()).put("message", refused).put("code", 403));
        return;
      }
      if (!access.reachable(ex, sandbox.id(), sandbox)) {
        return;
      }
      SandboxPortProxy.relay(ex, sandbox, port);
      return;
    }
    if (path.equals("/files")) {
      files.files(ex, sandbox, id);
      return;
    }
    if (!access.reachable(ex, id, sandbox)) {
      return;
    }
    if (path.equals("/health")) {
      ex.empty(204);
      return;
    }
    if (!EnvdAccess.tokenMatches(ex, sandbox)) {
      restError(ex, 401, "unauthorized access, please provide a valid access token or method signing if supported");
      return;
    }
    if (!ex.method().equals("POST")) {
      restError(ex, 405, "method " + ex.method() + " is not allowed on " + path);
      return;
    }
    sandbox.checkNotFrozen(); // its daemon cannot answer: every call says so at once rather than waiting
    EnvdCalls.Call call = calls.get(path);
    if (call == null) {
      throw new RpcError("unimplemented", "not implemented by the local runtime: " + path);
    }
    call.call(ex, sandbox);
  }

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
}
