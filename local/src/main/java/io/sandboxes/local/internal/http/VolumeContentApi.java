package io.sandboxes.local.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.local.internal.VolumeContent;
import io.sandboxes.local.internal.Volumes;
import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * E2B's volume content API ({@code /volumecontent/{volumeID}/dir}, {@code /file} and
 * {@code /path}), authorized as E2B's is: by the volume's token in {@code Authorization: Bearer},
 * not the API key. No token, or one that is no volume's, is 401; another volume's token is 403.
 * The files are read and written by {@link VolumeContent}, inside the volume's helper.
 */
final class VolumeContentApi {
  private final Volumes volumes;
  private final VolumeContent content;

  VolumeContentApi(Volumes volumes, VolumeContent content) {
    this.volumes = volumes;
    this.content = content;
  }

  /** Routes asked before the API key is: this API has its own authorization. */
  void routes(RouteTable.Builder t) {
    t.any("/volumecontent/([^/]+)/(dir|file|path)", (ex, m) -> answer(ex, m.group(1), m.group(2)));
    t.any("/volumecontent(/.*)?", (ex, m) -> Bodies.error(ex, 404, "no such volume content route: " + ex.path()));
  }

  private void answer(Exchange ex, String volumeId, String what) throws RpcError, IOException {
    if (!authorized(ex, volumeId)) {
      return;
    }
    String path = ex.query("path");
    if (path == null || path.isEmpty()) {
      Bodies.error(ex, 400, "the 'path' query parameter is required");
      return;
    }
    String op = switch (ex.method() + " " + what) {
      case "GET dir" -> "list";
      case "POST dir" -> "mkdir";
      case "GET file" -> "read";
      case "PUT file" -> "write";
      case "GET path" -> "stat";
      case "PATCH path" -> "update";
      case "DELETE path" -> "delete";
      default -> null;
    };
    if (op == null) {
      Bodies.error(ex, 405, "method " + ex.method() + " is not allowed on /volumecontent/{volumeID}/" + what);
      return;
    }
    try {
      switch (op) {
        case "read" -> read(ex, volumeId, path);
        case "write" -> ex.json(201, content.call(volumeId, op, path, options(ex, "uid", "gid", "mode", "force"), ex.body()));
        case "update" -> ex.json(200, content.call(volumeId, op, path, metadata(ex), null));
        case "delete" -> {
          content.call(volumeId, op, path, Map.of(), null);
          ex.empty(204);
        }
        case "mkdir" -> ex.json(201, content.call(volumeId, op, path, options(ex, "uid", "gid", "mode", "force"), null));
        case "list" -> ex.json(200, content.call(volumeId, op, path, options(ex, "depth"), null));
        default -> ex.json(200, content.call(volumeId, op, path, Map.of(), null));
      }
    } catch (VolumeContent.Refused r) {
      if (!ex.completed()) {
        Bodies.error(ex, r.status(), r.getMessage());
      }
    }
  }

  private void read(Exchange ex, String volumeId, String path) throws RpcError, IOException, VolumeContent.Refused {
    OutputStream[] out = new OutputStream[1];
    try {
      content.read(volumeId, path, () -> out[0] = ex.stream(200, "application/octet-stream"));
    } catch (IOException e) {
      if (out[0] != null) {
        ex.abort(e); // the answer began: end it abruptly, so a short file is never taken for a whole one
        return;
      }
      throw e;
    }
    if (out[0] == null) {
      out[0] = ex.stream(200, "application/octet-stream"); // an empty file
    }
    ex.finish(out[0]);
  }

  /** Whether the request carries this volume's token; answers 401 or 403 when not. */
  private boolean authorized(Exchange ex, String volumeId) {
    String auth = ex.header("Authorization");
    String token = auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7) ? auth.substring(7).trim() : null;
    if (token == null || token.isEmpty()) {
      Bodies.error(ex, 401, "missing volume token (Authorization: Bearer <the volume's token>)");
      return false;
    }
    Optional<Volumes.Volume> v = volumes.byId(volumeId);
    if (v.isPresent() && same(v.get().token(), token)) {
      return true;
    }
    boolean anyVolume = volumes.list().stream().anyMatch(o -> same(o.token(), token));
    if (anyVolume) {
      Bodies.error(ex, 403, "the token is another volume's, not that of volume '" + volumeId + "'");
    } else {
      Bodies.error(ex, 401, "invalid volume token");
    }
    return false;
  }

  private static boolean same(String expected, String given) {
    return !expected.isEmpty() && MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
  }

  /** The named query options: numbers (uid, gid, mode, depth) as whole non-negative numbers, force as true or false. */
  private static Map<String, String> options(Exchange ex, String... names) throws RpcError {
    Map<String, String> out = new LinkedHashMap<>();
    for (String n : names) {
      String v = ex.query(n);
      if (v == null || v.isEmpty()) {
        continue;
      }
      if (n.equals("force")) {
        if (!v.equals("true") && !v.equals("false")) {
          throw new RpcError("invalid_argument", "'force' must be true or false, got '" + v + "'");
        }
      } else {
        number(v, n);
      }
      out.put(n, v);
    }
    return out;
  }

  /** PATCH's body: {@code uid}, {@code gid}, {@code mode}, each a whole non-negative number when given. */
  private static Map<String, String> metadata(Exchange ex) throws RpcError, IOException {
    JsonNode body = Bodies.readJson(ex);
    Map<String, String> out = new LinkedHashMap<>();
    for (String n : new String[] {"uid", "gid", "mode"}) {
      JsonNode v = body.get(n);
      if (v == null || v.isNull()) {
        continue;
      }
      if (!v.canConvertToLong() || !v.isIntegralNumber()) {
        throw new RpcError("invalid_argument", "'" + n + "' must be a whole number");
      }
      out.put(n, number(v.asText(), n));
    }
    return out;
  }

  private static String number(String v, String name) throws RpcError {
    long max = name.equals("mode") ? 07777 : name.equals("depth") ? 10 : 0xffff_fffeL;
    try {
      long n = Long.parseLong(v);
      if (n >= 0 && n <= max) {
        return Long.toString(n);
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new RpcError("invalid_argument", "'" + name + "' must be a whole number from 0 to " + max + ", got '" + v + "'");
  }
}
