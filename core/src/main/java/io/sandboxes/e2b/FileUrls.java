package io.sandboxes.e2b;

import io.sandboxes.e2b.internal.Envd;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox's URLs: the preview URL of one of its ports ({@link LiveSandbox#previewUrl(int)}), and
 * the pre-signed file URLs of {@link LiveSandbox#downloadUrl(String, String, Duration)} and
 * {@link LiveSandbox#uploadUrl(String, String, Duration)}: envd's {@code /files} at the sandbox's
 * direct address, signed here with the token the client holds.
 */
final class FileUrls {
  private FileUrls() {}

  /** The preview URL of {@code port}: the provider's own resolver's, else E2B's {@code https://<port>-<id>.<domain>}. */
  static String preview(String id, int port, java.util.function.@Nullable BiFunction<String, Integer, String> resolver, String domain) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    return resolver != null ? resolver.apply(id, port) : "https://" + port + "-" + id + "." + domain;
  }

  /** The URL for {@code operation} ({@code read} or {@code write}) of {@code path}. */
  static URI of(LiveSandbox sandbox, String path, String operation, @Nullable String user, @Nullable Duration expiresIn) {
    String id = sandbox.id();
    if (expiresIn != null && (expiresIn.isNegative() || expiresIn.getSeconds() < 1)) {
      throw new IllegalArgumentException("expiresIn must be at least a second, got " + expiresIn);
    }
    Envd current = sandbox.envd();
    if (!current.secured() && expiresIn != null) {
      throw new IllegalStateException("sandbox " + id + " is not secured (it has no access token): its URLs are not signed,"
          + " so they cannot expire");
    }
    java.util.StringJoiner query = new java.util.StringJoiner("&");
    if (user != null && !user.isEmpty()) {
      query.add("username=" + urlEncode(user));
    }
    if (!path.isEmpty()) {
      query.add("path=" + urlEncode(path));
    }
    if (current.secured()) {
      Long expiration = expiresIn == null ? null : Instant.now().getEpochSecond() + expiresIn.getSeconds();
      query.add("signature=" + urlEncode(current.signature(path, operation, user == null ? "" : user, expiration)));
      if (expiration != null) {
        query.add("signature_expiration=" + expiration);
      }
    }
    String base = SandboxHandles.directEnvdUrl(sandbox.api(), id, sandbox.previewDomain()).toString();
    String files = (base.endsWith("/") ? base : base + "/") + "files";
    return URI.create(query.length() == 0 ? files : files + "?" + query);
  }

  private static String urlEncode(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
  }
}
