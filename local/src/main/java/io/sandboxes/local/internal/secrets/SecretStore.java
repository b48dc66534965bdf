package io.sandboxes.local.internal.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.internal.common.RpcError;
import io.sandboxes.local.internal.common.StructuredLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's secrets, as E2B's secrets API keeps them: a name (canonical in lower case, unique),
 * an id ({@code sec_}…), a version counted from 1, the caller's metadata and two times; and the
 * value, which is written to the secret's file and never read back into an answer. Only the
 * current value is kept: an update overwrites the one before it.
 *
 * <p>What a caller sends is confidential, names included: no refusal repeats any of it, and the
 * log names a secret by its id only.
 */
public final class SecretStore {
  private static final Logger LOG = LoggerFactory.getLogger(SecretStore.class);
  /** The most secrets a server keeps. */
  public static final int MAX_SECRETS = 1000;
  /** The largest value, in bytes of UTF-8. */
  public static final int MAX_VALUE_BYTES = 64 * 1024;
  private static final int MAX_NAME = 128;
  private static final int MAX_METADATA_ENTRIES = 32;
  private static final int MAX_METADATA_KEY = 128;
  private static final int MAX_METADATA_VALUE = 1024;
  private static final int MAX_METADATA_TOTAL = 8192;

  /** E2B's answers, which carry nothing of the request. */
  static final String INVALID = "Invalid secrets request";
  static final String NOT_FOUND = "Secret not found";
  static final String CONFLICT = "Secret cannot be modified in its current state";

  /**
   * One secret, as every answer shows it: never its value.
   *
   * @param secretID its id, {@code sec_}…
   * @param name its canonical (lower-case) name
   * @param currentVersion 1 when created, one more per update
   * @param metadata the caller's, empty when none
   */
  public record Info(String secretID, String name, long currentVersion, Map<String, String> metadata, Instant createdAt,
      Instant updatedAt) {
    public Info {
      metadata = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }
  }

  /**
   * A page of secrets, in the order they were made.
   *
   * @param nextToken where the next page starts, null on the last
   */
  public record Page(List<Info> secrets, @Nullable String nextToken) {}

  private final SecretFiles files;
  /** By id, so in the order made (ids sort by time). */
  private final TreeMap<String, Info> byId = new TreeMap<>();
  private final Map<String, String> idByName = new LinkedHashMap<>();

  private SecretStore(SecretFiles files) {
    this.files = files;
  }

  /**
   * Opens the secrets kept in {@code folder} (made, 0700, when missing). A file that cannot be
   * read is logged by name and left alone, never taken for no secret: its name stays taken.
   *
   * @throws IOException when the folder cannot be opened or made
   */
  public static SecretStore open(Path folder) throws IOException {
    SecretStore store = new SecretStore(SecretFiles.open(folder));
    for (Path f : store.files.list()) {
      String id = f.getFileName().toString().replaceFirst("\\.json$", "");
      try {
        JsonNode n = Json.parse(store.files.read(f));
        Info info = new Info(id, n.path("name").asText(), n.path("currentVersion").asLong(), stringMap(n.get("metadata")),
            Instant.parse(n.path("createdAt").asText()), Instant.parse(n.path("updatedAt").asText()));
        if (!SecretIds.wellFormed(id) || !info.name().equals(canonicalName(info.name())) || info.currentVersion() < 1) {
          throw new IOException("not a secret's file");
        }
        store.byId.put(id, info);
        store.idByName.put(info.name(), id);
      } catch (IOException | RuntimeException | RpcError e) {
        StructuredLog.atWarn(LOG).addKeyValue("event", "secret.unreadable").addKeyValue("file", f)
            .log("a secret's file could not be read and is left as it is ({})", e.getClass().getSimpleName());
      }
    }
    return store;
  }

  /** Makes a secret with its first value; a name in use is a conflict (409). */
  public synchronized Info create(String name, String value, @Nullable Map<String, String> metadata) throws RpcError {
    String canonical = canonicalName(name);
    checkValue(value);
    Map<String, String> meta = checkMetadata(metadata == null ? Map.of() : metadata);
    if (idByName.containsKey(canonical)) {
      throw new RpcError("already_exists", CONFLICT + ": a secret of that name exists");
    }
    if (byId.size() >= MAX_SECRETS) {
      throw new RpcError("already_exists", CONFLICT + ": this server keeps at most " + MAX_SECRETS + " secrets");
    }
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    String id = SecretIds.next(now);
    while (byId.containsKey(id)) {
      id = SecretIds.next(now);
    }
    Info info = new Info(id, canonical, 1, meta, now, now);
    store(info, value);
    idByName.put(canonical, id);
    StructuredLog.atInfo(LOG).addKeyValue("event", "secret.created").addKeyValue("secret", id).log("secret created");
    return info;
  }

  /**
   * Stores a new value (the next version); metadata, when given (even empty), replaces what the
   * secret had, else it is kept.
   */
  public synchronized Info update(String selector, String value, @Nullable Map<String, String> metadata) throws RpcError {
    Info old = find(selector);
    checkValue(value);
    Map<String, String> meta = metadata == null ? old.metadata() : checkMetadata(metadata);
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    Info info = new Info(old.secretID(), old.name(), old.currentVersion() + 1, meta, old.createdAt(),
        now.isAfter(old.updatedAt()) ? now : old.updatedAt());
    store(info, value);
    StructuredLog.atInfo(LOG).addKeyValue("event", "secret.updated").addKeyValue("secret", info.secretID())
        .addKeyValue("version", info.currentVersion()).log("secret updated");
    return info;
  }

  /** A secret by its id or its name (any case). */
  public synchronized Info get(String selector) throws RpcError {
    return find(selector);
  }

  /** A secret by name (any case), empty when there is none or the name is not a secret's name. */
  public synchronized Optional<Info> byName(String name) {
    String id = idByName.get(name.trim().toLowerCase(Locale.ROOT));
    return id == null ? Optional.empty() : Optional.of(byId.get(id));
  }

  /**
   * A secret's current value, by name (any case), for the egress gateway to fill into a request
   * as it sends it; never for an answer or a log.
   *
   * @return the value, or null when there is no such secret or its file cannot be read (logged by id)
   */
  public synchronized @Nullable String valueOf(String name) {
    String id = idByName.get(name.trim().toLowerCase(Locale.ROOT));
    if (id == null) {
      return null;
    }
    try {
      JsonNode v = Json.parse(files.read(files.folder().resolve(id + ".json"))).get("value");
      return v == null || !v.isTextual() ? null : v.asText();
    } catch (IOException | RuntimeException e) {
      StructuredLog.atWarn(LOG).addKeyValue("event", "secret.unreadable").addKeyValue("secret", id)
          .log("a secret's value could not be read for a request ({})", e.getClass().getSimpleName());
      return null;
    }
  }

  /**
   * Up to {@code limit} secrets after {@code nextToken} (a previous page's), in the order made.
   *
   * @throws RpcError for a token this store did not hand out
   */
  public synchronized Page list(int limit, @Nullable String nextToken) throws RpcError {
    if (nextToken != null && !SecretIds.wellFormed(nextToken)) {
      throw new RpcError("invalid_argument", INVALID + ": the nextToken is not one this server handed out");
    }
    var rest = nextToken == null ? byId.values() : byId.tailMap(nextToken, false).values();
    List<Info> page = new ArrayList<>();
    for (Info i : rest) {
      if (page.size() == limit) {
        return new Page(page, page.get(page.size() - 1).secretID());
      }
      page.add(i);
    }
    return new Page(page, null);
  }

  /** Removes a secret and its value. */
  public synchronized void delete(String selector) throws RpcError {
    Info info = find(selector);
    try {
      files.delete(info.secretID());
    } catch (IOException e) {
      throw new RpcError("internal", "the secret could not be removed: " + e.getClass().getSimpleName());
    }
    byId.remove(info.secretID());
    idByName.remove(info.name());
    StructuredLog.atInfo(LOG).addKeyValue("event", "secret.deleted").addKeyValue("secret", info.secretID()).log("secret deleted");
  }

  /**
   * Removes every secret and the folder: for a server no later server can take the secrets back
   * from (an in-process server with a fresh id), so none stays on the disk when it ends.
   */
  public synchronized void discard() {
    try {
      files.deleteAll();
    } catch (IOException e) {
      StructuredLog.atWarn(LOG).addKeyValue("event", "secret.discard-failed").addKeyValue("folder", files.folder())
          .log("the secrets of a server that ends could not all be removed ({})", e.getClass().getSimpleName());
    }
    byId.clear();
    idByName.clear();
  }

  private Info find(String selector) throws RpcError {
    String s = selector.trim().toLowerCase(Locale.ROOT);
    if (s.startsWith(SecretIds.PREFIX)) {
      if (!SecretIds.wellFormed(s)) {
        throw new RpcError("invalid_argument", INVALID + ": an id is sec_ and 26 characters of base32");
      }
      Info info = byId.get(s);
      if (info == null) {
        throw new RpcError("not_found", NOT_FOUND);
      }
      return info;
    }
    String id = idByName.get(canonicalName(selector));
    if (id == null) {
      throw new RpcError("not_found", NOT_FOUND);
    }
    return byId.get(id);
  }

  /** The file's bytes first, then the table: a secret the answer names is on disk. */
  private void store(Info info, String value) throws RpcError {
    ObjectNode n = Json.object().put("name", info.name()).put("currentVersion", info.currentVersion());
    n.set("metadata", Json.MAPPER.valueToTree(info.metadata()));
    n.put("createdAt", info.createdAt().toString()).put("updatedAt", info.updatedAt().toString()).put("value", value);
    try {
      files.write(info.secretID(), (n + "\n").getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new RpcError("internal", "the secret could not be stored: " + e.getClass().getSimpleName());
    }
    byId.put(info.secretID(), info);
  }

  /** E2B's canonical name: trimmed, 1 to 128 of {@code A-Z a-z 0-9 _ -}, lower-cased, not starting {@code sec_}. */
  static String canonicalName(String name) throws RpcError {
    String n = name.trim();
    if (n.isEmpty() || n.length() > MAX_NAME || !n.chars().allMatch(c -> c < 128 && (Character.isLetterOrDigit(c) || c == '_' || c == '-'))) {
      throw new RpcError("invalid_argument", INVALID + ": a name is 1 to " + MAX_NAME + " of A-Z, a-z, 0-9, _ and -");
    }
    n = n.toLowerCase(Locale.ROOT);
    if (n.startsWith(SecretIds.PREFIX)) {
      throw new RpcError("invalid_argument", INVALID + ": a name may not start with sec_ (the ids' prefix)");
    }
    return n;
  }

  private static void checkValue(String value) throws RpcError {
    if (value.getBytes(StandardCharsets.UTF_8).length > MAX_VALUE_BYTES) {
      throw new RpcError("invalid_argument", INVALID + ": a value is at most " + MAX_VALUE_BYTES + " bytes");
    }
  }

  private static Map<String, String> checkMetadata(Map<String, String> metadata) throws RpcError {
    if (metadata.size() > MAX_METADATA_ENTRIES) {
      throw new RpcError("invalid_argument", INVALID + ": metadata holds at most " + MAX_METADATA_ENTRIES + " entries");
    }
    int total = 0;
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      int k = e.getKey().getBytes(StandardCharsets.UTF_8).length;
      int v = e.getValue().getBytes(StandardCharsets.UTF_8).length;
      if (k == 0 || k > MAX_METADATA_KEY || v > MAX_METADATA_VALUE) {
        throw new RpcError("invalid_argument", INVALID + ": a metadata key is 1 to " + MAX_METADATA_KEY + " bytes, a value at most "
            + MAX_METADATA_VALUE);
      }
      total += k + v;
    }
    if (total > MAX_METADATA_TOTAL) {
      throw new RpcError("invalid_argument", INVALID + ": a secret's metadata is at most " + MAX_METADATA_TOTAL + " bytes in all");
    }
    return metadata;
  }

  private static Map<String, String> stringMap(@Nullable JsonNode n) {
    Map<String, String> out = new LinkedHashMap<>();
    if (n != null && n.isObject()) {
      n.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    }
    return out;
  }
}
