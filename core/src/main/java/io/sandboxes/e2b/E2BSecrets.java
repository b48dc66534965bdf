package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.e2b.internal.Secrets;
import java.lang.ref.Reference;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Secrets as E2B's {@code Secret} offers them: values stored on E2B's cloud that sandboxes' network
 * rules refer to by {@link #fill(String) placeholder}, never read back. A secret is named by its id
 * or its name. Obtained from {@link E2BApi#secrets()}, whose HTTP client, request timeout and
 * retries it shares. Thread-safe. The local server does not serve secrets.
 *
 * <p>A value sent is never part of an exception's message, whatever the server echoes.
 *
 * {@snippet :
 * E2BSecrets secrets = e2b.api().secrets();
 * SecretInfo key = secrets.create("openai-key", System.getenv("OPENAI_API_KEY"));
 * String placeholder = E2BSecrets.fill("openai-key");   // "${e2b.secrets.openai-key}"
 * }
 *
 * @since 0.1
 */
public final class E2BSecrets {
  /** The page size of {@link #list()}, E2B's SDK's default: 100. */
  public static final int DEFAULT_PAGE_SIZE = 100;

  private final E2BApi api;
  private final ControlPlane controlPlane;

  E2BSecrets(E2BApi api, ControlPlane controlPlane) {
    this.api = api;
    this.controlPlane = controlPlane;
  }

  /**
   * Creates a secret with its first value, as E2B's {@code Secret.create(name, value)}.
   *
   * @param name its name, unique per project
   * @param value its value, write-only
   * @return its metadata, version 1
   */
  public SecretInfo create(String name, String value) {
    return create(name, value, null);
  }

  /**
   * Creates a secret with its first value and metadata, as E2B's
   * {@code Secret.create(name, value, {metadata})}.
   *
   * @param name its name, unique per project
   * @param value its value, write-only
   * @param metadata the caller's metadata, or null for none
   * @return its metadata, version 1
   */
  public SecretInfo create(String name, String value, @Nullable Map<String, String> metadata) {
    Objects.requireNonNull(name, "name");
    ObjectNode body = Json.object().put("name", name).put("value", Objects.requireNonNull(value, "value"));
    if (metadata != null) {
      body.set("metadata", Json.toObject(metadata));
    }
    api.provider().ensureOpen();
    return secretInfo(withValueHidden(value, () -> controlPlane.createSecret(body)), "create secret " + name);
  }

  /**
   * Stores a new value as the secret's next version, as E2B's {@code Secret.update}.
   *
   * @param secret its id or name
   * @param value the new value, write-only
   * @param metadata metadata to replace the stored metadata, or null to keep it
   * @return its metadata with the new version
   * @throws SecretNotFoundException when there is no such secret
   */
  public SecretInfo update(String secret, String value, @Nullable Map<String, String> metadata) {
    Objects.requireNonNull(secret, "secret");
    ObjectNode body = Json.object().put("value", Objects.requireNonNull(value, "value"));
    if (metadata != null) {
      body.set("metadata", Json.toObject(metadata));
    }
    api.provider().ensureOpen();
    JsonNode answer = withValueHidden(value, () -> controlPlane.updateSecret(secret, body));
    if (answer == null) {
      throw new SecretNotFoundException(secret, null, "update secret " + secret);
    }
    return secretInfo(answer, "update secret " + secret);
  }

  /**
   * Reads a secret's metadata, as E2B's {@code Secret.getInfo}.
   *
   * @param secret its id or name
   * @return its metadata
   * @throws SecretNotFoundException when there is no such secret
   */
  public SecretInfo getInfo(String secret) {
    Objects.requireNonNull(secret, "secret");
    api.provider().ensureOpen();
    JsonNode answer = controlPlane.getSecret(secret);
    if (answer == null) {
      throw new SecretNotFoundException(secret, null, "get secret " + secret);
    }
    return secretInfo(answer, "get secret " + secret);
  }

  /**
   * Says whether a secret exists, as E2B's {@code Secret.exists}: false only when the server
   * answers 404; any other failure is thrown.
   *
   * @param secret its id or name
   * @return true when it exists
   */
  public boolean exists(String secret) {
    try {
      getInfo(secret);
      return true;
    } catch (SecretNotFoundException e) {
      return false;
    }
  }

  /**
   * Lists one page of the project's secrets, as E2B's {@code Secret.list({limit, nextToken})}.
   *
   * @param limit how many per page, at least 1
   * @param nextToken the previous page's {@link SecretPage#nextToken()}, or null for the first
   * @return the page
   */
  public SecretPage list(int limit, @Nullable String nextToken) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    api.provider().ensureOpen();
    ControlPlane.Page page = controlPlane.listSecrets(limit, nextToken);
    List<SecretInfo> out = new ArrayList<>();
    page.rows().forEach(r -> out.add(secretInfo(r, "list secrets")));
    return new SecretPage(out, page.nextToken());
  }

  /**
   * Lists every secret of the project, page after page.
   *
   * @return all of them
   */
  public List<SecretInfo> list() {
    List<SecretInfo> all = new ArrayList<>();
    String token = null;
    do {
      SecretPage page = list(DEFAULT_PAGE_SIZE, token);
      all.addAll(page.secrets());
      if (page.nextToken() != null && page.nextToken().equals(token)) {
        throw new SandboxException("list secrets: the server answered the same next-page token twice: " + token);
      }
      token = page.nextToken();
    } while (token != null);
    return all;
  }

  /**
   * Destroys a secret and all its versions, as E2B's {@code Secret.destroy}.
   *
   * @param secret its id or name
   * @return false when there was no such secret
   */
  public boolean destroy(String secret) {
    Objects.requireNonNull(secret, "secret");
    api.provider().ensureOpen();
    return controlPlane.deleteSecret(secret);
  }

  /**
   * The placeholder E2B's runtime replaces with a secret's current value, as E2B's
   * {@code Secret.fill(name)}: {@code ${e2b.secrets.<name>}}. Made here, with no call; an unknown
   * name fails on the server when the placeholder is resolved.
   *
   * @param name the secret's name
   * @return the placeholder
   * @throws IllegalArgumentException when the name is empty or has a brace or a control
   *     character, which the placeholder cannot carry
   */
  public static String fill(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || name.chars().anyMatch(c -> c == '{' || c == '}' || Character.isISOControl(c))) {
      throw new IllegalArgumentException("a secret name for a placeholder must not be empty or have '{', '}' or control characters, got "
          + Json.abbreviate(name));
    }
    return "${e2b.secrets." + name + "}";
  }

  /** Runs a call with the value held as a secret, so no exception made meanwhile shows it. */
  private static <T> T withValueHidden(String value, Supplier<T> call) {
    Object holder = new Object();
    Secrets.hold(holder, value);
    try {
      return call.get();
    } finally {
      Reference.reachabilityFence(holder);
    }
  }

  private static SecretInfo secretInfo(JsonNode s, String context) {
    try {
      Long version = Json.exactLong(s.get("currentVersion"));
      if (version == null) {
        throw new IllegalArgumentException("no whole number 'currentVersion'");
      }
      Instant created = Timestamps.instant(Json.requireText(s, "createdAt"));
      Instant updated = Timestamps.instant(Json.requireText(s, "updatedAt"));
      if (created == null || updated == null) {
        throw new IllegalArgumentException("'createdAt' or 'updatedAt' is no RFC 3339 time");
      }
      return new SecretInfo(Json.requireText(s, "secretID"), Json.requireText(s, "name"), version, Json.stringMap(s.get("metadata")),
          created, updated);
    } catch (RuntimeException e) {
      throw new SandboxException(context + ": a secret record of a shape this client cannot read (" + e.getMessage() + "): "
          + Json.abbreviate(s), e);
    }
  }
}
