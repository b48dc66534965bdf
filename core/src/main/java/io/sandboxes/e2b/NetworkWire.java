package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.EgressProxy;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.e2b.internal.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A {@link SandboxNetwork} on the wire, as E2B's SDK 2.51 sends it: {@code allow_internet_access}
 * beside {@code network} in a create, inside the body of {@code PUT /sandboxes/{id}/network}; and
 * read back from a sandbox's record ({@code allowInternetAccess} beside {@code network}). Empty
 * lists and unset fields are left out, so the server's default applies to them.
 */
final class NetworkWire {
  private NetworkWire() {}

  /** Adds the network to a create request's body. */
  static void putCreate(ObjectNode body, SandboxNetwork network) {
    if (network.allowInternetAccess() != null) {
      body.put("allow_internet_access", network.allowInternetAccess());
    }
    ObjectNode n = egress(network);
    if (network.allowPublicTraffic() != null) {
      n.put("allowPublicTraffic", network.allowPublicTraffic());
    }
    if (network.maskRequestHost() != null) {
      n.put("maskRequestHost", network.maskRequestHost());
    }
    if (!n.isEmpty()) {
      body.set("network", n);
    }
  }

  /**
   * The body of an update, which replaces the whole policy.
   *
   * @throws IllegalArgumentException when the network sets what only a create can
   */
  static ObjectNode update(SandboxNetwork network) {
    if (network.allowPublicTraffic() != null || network.maskRequestHost() != null) {
      throw new IllegalArgumentException("allowPublicTraffic and maskRequestHost are fixed when the sandbox is created;"
          + " an update takes allowOut, denyOut, rules and allowInternetAccess only");
    }
    ObjectNode body = egress(network);
    if (network.allowInternetAccess() != null) {
      body.put("allow_internet_access", network.allowInternetAccess());
    }
    return body;
  }

  private static ObjectNode egress(SandboxNetwork network) {
    ObjectNode n = Json.object();
    if (!network.allowOut().isEmpty()) {
      network.allowOut().forEach(n.putArray("allowOut")::add);
    }
    if (!network.denyOut().isEmpty()) {
      network.denyOut().forEach(n.putArray("denyOut")::add);
    }
    if (!network.rules().isEmpty()) {
      ObjectNode rules = n.putObject("rules");
      network.rules().forEach((host, list) -> {
        ArrayNode out = rules.putArray(host);
        list.forEach(r -> {
          ObjectNode headers = out.addObject().putObject("transform").putObject("headers");
          r.headers().forEach(headers::put);
        });
      });
    }
    EgressProxy proxy = network.egressProxy();
    if (proxy != null) {
      ObjectNode p = n.putObject("egressProxy").put("address", proxy.address());
      if (proxy.username() != null) {
        p.put("username", proxy.username());
      }
      if (proxy.password() != null) {
        p.put("password", proxy.password());
      }
    }
    return n;
  }

  /**
   * Reads the network of a sandbox's record. A proxy's password is never in it, and is never read:
   * the proxy is its address and user name.
   *
   * @return the network, or null when the record says nothing of it
   * @throws IllegalArgumentException when what it says cannot be read
   */
  static @Nullable SandboxNetwork read(JsonNode row) {
    JsonNode n = row.get("network");
    JsonNode internet = row.get("allowInternetAccess");
    boolean hasNetwork = n != null && n.isObject();
    boolean hasInternet = internet != null && internet.isBoolean();
    if (!hasNetwork && !hasInternet) {
      return null;
    }
    JsonNode net = hasNetwork ? n : Json.object();
    Map<String, List<SandboxNetwork.Rule>> rules = new LinkedHashMap<>();
    JsonNode rawRules = net.get("rules");
    if (rawRules != null && rawRules.isObject()) {
      rawRules.properties().forEach(e -> {
        List<SandboxNetwork.Rule> list = new ArrayList<>();
        if (!e.getValue().isArray()) {
          throw new IllegalArgumentException("the rules of " + e.getKey() + " are not a list");
        }
        e.getValue().forEach(r -> list.add(new SandboxNetwork.Rule(Json.stringMap(r.path("transform").get("headers")))));
        rules.put(e.getKey(), list);
      });
    }
    JsonNode pub = net.get("allowPublicTraffic");
    String mask = Json.text(net, "maskRequestHost");
    JsonNode proxy = net.get("egressProxy");
    EgressProxy egressProxy = proxy == null || !proxy.isObject() ? null
        : new EgressProxy(Json.requireText(proxy, "address"), Json.text(proxy, "username"), null);
    return new SandboxNetwork(strings(net.get("allowOut")), strings(net.get("denyOut")), rules,
        hasInternet ? internet.asBoolean() : null, pub != null && pub.isBoolean() ? pub.asBoolean() : null,
        mask == null || mask.isEmpty() ? null : mask, egressProxy);
  }

  private static List<String> strings(@Nullable JsonNode list) {
    List<String> out = new ArrayList<>();
    if (list == null || list.isNull()) {
      return out;
    }
    if (!list.isArray()) {
      throw new IllegalArgumentException("not a list: " + Json.abbreviate(list));
    }
    list.forEach(v -> out.add(v.asText()));
    return out;
  }
}
