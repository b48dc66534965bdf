package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.EgressProbe;
import io.sandboxes.e2b.internal.Connect;
import io.sandboxes.local.internal.Registry;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.TemplateBuilds;
import io.sandboxes.local.internal.Volumes;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * E2B's control plane, as the official SDKs call it, through one route table: health, the
 * template uploads (authorized by their link) and the volume content API (by the volume's token:
 * {@link VolumeContentApi}) first, then the API key, then the resources:
 * sandboxes ({@link SandboxesApi}, {@link SandboxListing}), their network ({@link NetworkApi}),
 * metrics and logs ({@link MetricsApi}), volumes ({@link VolumesApi}), secrets ({@link SecretsApi}), templates
 * ({@link TemplateApi}), snapshots ({@link SnapshotsApi}) and this server's own routes
 * ({@link LocalApi}). A request no route takes is 501. Errors are {@code {code, message}} with
 * the same HTTP status.
 */
public final class ApiHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);

  private final Registry registry;
  private final Volumes volumes;
  private final byte[] apiKey;
  private final Supplier<EgressProbe> egressProbe;
  private final BiFunction<String, Integer, URI> forward;
  private final boolean internetByDefault;

  private volatile @Nullable TemplateApi templateApi;
  private volatile @Nullable TemplateBuilds templateBuilds;
  private volatile @Nullable Supplier<ObjectNode> serverInfo;
  private volatile @Nullable SecretsApi secrets;
  private volatile io.sandboxes.local.internal.secrets.@Nullable SecretStore secretStore;
  private volatile @Nullable VolumeContentApi volumeContent;
  private volatile RouteTable routes;

  /**
   * @param apiKey the key every request but health and template uploads must carry in {@code X-API-KEY}
   * @param egressProbe the egress witnesses, for {@code GET /local/egress-probe}
   * @param forward reaches a sandbox's port from this machine, for {@code POST /local/sandboxes/{id}/ports/{port}}
   * @param internetByDefault whether a create that does not say {@code allow_internet_access} gets it, as on E2B
   */
  public ApiHandler(Registry registry, Volumes volumes, String apiKey, Supplier<EgressProbe> egressProbe,
      BiFunction<String, Integer, URI> forward, boolean internetByDefault) {
    this.registry = registry;
    this.volumes = volumes;
    this.apiKey = apiKey.getBytes(StandardCharsets.UTF_8);
    this.egressProbe = egressProbe;
    this.forward = forward;
    this.internetByDefault = internetByDefault;
    this.routes = table();
  }

  /** Answers {@code GET /local/server} (with the API key) with what this supplies: how the server is set up. */
  public void serverInfo(Supplier<ObjectNode> info) {
    this.serverInfo = info;
    this.routes = table();
  }

  /** Serves E2B's template build API from these builds; upload links point at {@code apiUrl}. */
  public void templateBuilds(TemplateBuilds builds, Supplier<URI> apiUrl) {
    this.templateBuilds = builds;
    this.templateApi = new TemplateApi(builds, registry, apiUrl);
    this.routes = table();
  }

  /** Serves E2B's volume content API (authorized by each volume's token) through this. */
  public void volumeContent(io.sandboxes.local.internal.VolumeContent content) {
    this.volumeContent = new VolumeContentApi(volumes, content);
    this.routes = table();
  }

  /** Serves E2B's secrets API from this store. */
  public void secrets(io.sandboxes.local.internal.secrets.SecretStore store) {
    this.secrets = new SecretsApi(store);
    this.secretStore = store;
    this.routes = table();
  }

  private synchronized RouteTable table() {
    Lookup lookup = new Lookup(registry);
    NetworkApi network = new NetworkApi(registry, lookup, internetByDefault, secretStore);
    TemplateApi templates = templateApi;
    RouteTable.Builder t = RouteTable.builder();
    t.on("GET", "/health", (ex, m) -> ex.empty(204));
    if (templates != null) {
      templates.uploadRoute(t);
    }
    VolumeContentApi content = volumeContent;
    if (content != null) {
      content.routes(t); // authorized by the volume's token, not the API key
    }
    t.add(null, ".*", (ex, m) -> refuseWithoutKey(ex));
    new SandboxesApi(registry, lookup, volumes, network, templateBuilds).routes(t);
    network.routes(t);
    new MetricsApi(registry, lookup).routes(t);
    new LocalApi(egressProbe, forward, serverInfo).routes(t);
    new VolumesApi(registry, volumes).routes(t);
    if (templates != null) {
      templates.routes(t); // before the snapshots': built templates first, then base and snapshots
    }
    new SnapshotsApi(registry, lookup).routes(t);
    SecretsApi secretsApi = secrets;
    if (secretsApi != null) {
      secretsApi.routes(t);
    }
    return t.build();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    Exchange ex = new Exchange(request, response, callback);
    try {
      if (!routes.dispatch(ex)) {
        Bodies.error(ex, 501, "not implemented by the local runtime: " + ex.method() + " " + ex.path());
      }
    } catch (RpcError e) {
      Bodies.error(ex, Connect.httpStatus(e.code()), e.getMessage());
    } catch (Exchange.BodyTooLarge e) {
      if (!ex.completed()) {
        ex.tooLarge(e);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("{} {} failed", ex.method(), ex.path(), e);
      if (!ex.completed()) {
        Bodies.error(ex, 500, "internal error: " + e.getMessage());
      } else {
        ex.abort(e);
      }
    }
    return true;
  }

  /** Answers 401 for a request without the API key; declines (lets the routes after it answer) one with it. */
  private boolean refuseWithoutKey(Exchange ex) {
    String key = ex.header("X-API-KEY");
    if (key != null && MessageDigest.isEqual(key.getBytes(StandardCharsets.UTF_8), apiKey)) {
      return false;
    }
    Bodies.error(ex, 401, key == null ? "Missing API key (X-API-KEY header)" : "Invalid API key");
    return true;
  }
}
