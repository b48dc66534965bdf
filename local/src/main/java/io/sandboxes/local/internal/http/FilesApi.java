package io.sandboxes.local.internal.http;

import static io.sandboxes.local.internal.http.EnvdCalls.restError;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.sandboxes.local.internal.FileEntry;
import io.sandboxes.local.internal.LocalSandbox;
import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.http.MultiPart;
import org.jspecify.annotations.Nullable;

/**
 * envd's {@code /files}: a file down (GET, streamed as it is read) or files up (POST, raw or
 * multipart, each part streamed into the sandbox as it arrives), authorized by the sandbox's
 * access token or by a pre-signed URL's signature, which may also name the sandbox.
 */
final class FilesApi {
  private final EnvdAccess access;

  FilesApi(EnvdAccess access) {
    this.access = access;
  }

  /** Answers {@code /files}: a download (GET) or an upload (POST) for the request's sandbox, or one a signature names. */
  void files(Exchange ex, @Nullable LocalSandbox sandbox, @Nullable String id) throws IOException {
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
      sandbox = access.registry().bySignature(s -> signed(s, path, op, username, signature, expiration) != Signed.INVALID)
          .orElse(null);
    }
    if (!access.reachable(ex, id, sandbox, ex::discardSmallBody)) {
      return;
    }
    if (!EnvdAccess.tokenMatches(ex, sandbox)) {
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
      user = EnvdCalls.checkUser(username == null ? "" : username);
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
        if (!read) {
          // a refused upload (a full disk) whose client still sends: read its rest, so the answer is
          // not lost to a connection reset by the close
          ex.discardBody(Exchange.DISCARDED_UPLOAD);
        }
        restError(ex, status, e.getMessage());
      }
    }
  }

  private void writeFiles(Exchange ex, LocalSandbox sandbox, String user, @Nullable String path) throws RpcError, IOException {
    String type = ex.header("Content-Type");
    List<Written> written = new ArrayList<>();
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
        MultipartUpload.read(ex.uploadBody(), boundary, new MultipartUpload.PartWriter() {
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
            Written entry = Written.of(sandbox.files().write(user, target, content, metadata));
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
      InputStream body = ex.uploadBody();
      if ("gzip".equalsIgnoreCase(ex.header("Content-Encoding"))) {
        body = new java.util.zip.GZIPInputStream(body);
      }
      try (InputStream in = body) {
        written.add(Written.of(sandbox.files().write(user, path, in, metadata)));
      }
    }
    if (written.isEmpty()) {
      restError(ex, 400, "the upload held no file");
      return;
    }
    Bodies.json(ex, 200, written);
  }

  /** An upload's answer for one file: envd's {@code path}, {@code name}, {@code type} and its metadata (left out when empty). */
  record Written(String path, String name, String type, @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> metadata) {
    static Written of(FileEntry entry) {
      String absolute = entry.path();
      return new Written(absolute, absolute.substring(absolute.lastIndexOf('/') + 1), "file", entry.metadata());
    }
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
