package io.sandboxes.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.ControlPlane;
import io.sandboxes.e2b.internal.Http;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Volumes as E2B's {@code Volume} statics offer them: create, connect (a {@link Volume} with its
 * token, for content calls), list, describe and destroy. Obtained from {@link E2BApi#volumes()},
 * whose HTTP client, request timeout and retries it shares; control-plane calls carry the API
 * key. Thread-safe.
 *
 * <p>Where content calls go, first found: {@link #withContentUrl(URI)}; the
 * {@code E2B_VOLUME_API_URL} environment variable; {@code https://api.<domain>} when the control
 * plane names a domain for the volume (an account on its own cluster); else the provider's
 * control-plane URL, which is {@code https://api.<domain>} unless configured, as E2B's SDK
 * derives it. (E2B's SDK does not follow a configured API URL there; this client does, so a
 * provider pointed at one server sends everything to it.)
 *
 * {@snippet :
 * E2BVolumes volumes = e2b.api().volumes();
 * Volume data = volumes.create("data");
 * Volume again = volumes.connect(data.volumeId());   // the same volume, with its token
 * volumes.destroy(data.volumeId());
 * }
 *
 * @since 0.1
 */
public final class E2BVolumes {
  /** The environment variable naming the volume API URL, as E2B's SDK reads it. */
  public static final String VOLUME_API_URL_ENV = "E2B_VOLUME_API_URL";

  private final E2BApi api;
  private final ControlPlane controlPlane;
  private final Http http;
  private final @Nullable URI contentUrl;

  E2BVolumes(E2BApi api, ControlPlane controlPlane, Http http) {
    this(api, controlPlane, http, url(System.getenv(VOLUME_API_URL_ENV), VOLUME_API_URL_ENV));
  }

  private E2BVolumes(E2BApi api, ControlPlane controlPlane, Http http, @Nullable URI contentUrl) {
    this.api = api;
    this.controlPlane = controlPlane;
    this.http = http;
    this.contentUrl = contentUrl;
  }

  static @Nullable URI url(@Nullable String value, String what) {
    if (value == null || value.isBlank()) {
      return null;
    }
    URI u = URI.create(value.strip());
    if (!("http".equalsIgnoreCase(u.getScheme()) || "https".equalsIgnoreCase(u.getScheme())) || u.getHost() == null) {
      throw new IllegalArgumentException(what + " must be an http(s) URL, got '" + value + "'");
    }
    return u;
  }

  /**
   * These volumes with content calls sent to another URL, as E2B's {@code apiUrl} option of the
   * volume content calls.
   *
   * @param contentUrl the volume API's base URL; overrides {@code E2B_VOLUME_API_URL}
   * @return a view whose volumes send their content calls there
   * @throws IllegalArgumentException when it is not an http(s) URL with a host
   */
  public E2BVolumes withContentUrl(URI contentUrl) {
    Objects.requireNonNull(contentUrl, "contentUrl");
    URI checked = url(contentUrl.toString(), "contentUrl");
    return new E2BVolumes(api, controlPlane, http, checked);
  }

  /**
   * Creates a named volume, as E2B's {@code Volume.create(name)}.
   *
   * @param name its name, unique per account
   * @return the new volume, with its token
   */
  public Volume create(String name) {
    Objects.requireNonNull(name, "name");
    api.provider().ensureOpen();
    return volume(controlPlane.createVolume(name), "create volume " + name);
  }

  /**
   * Connects to a volume by its id, as E2B's {@code Volume.connect(volumeId)}: reads its name,
   * token and domain from the control plane.
   *
   * @param volumeId the volume's id
   * @return the volume, with its token
   * @throws VolumeNotFoundException when the control plane has no such volume
   */
  public Volume connect(String volumeId) {
    Objects.requireNonNull(volumeId, "volumeId");
    api.provider().ensureOpen();
    JsonNode v = controlPlane.getVolume(volumeId);
    if (v == null) {
      throw new VolumeNotFoundException(volumeId, null, "connect to volume " + volumeId);
    }
    return volume(v, "connect to volume " + volumeId);
  }

  /**
   * Connects to a volume by its name: finds it in {@link #list()}, then connects by its id. (E2B's
   * SDK connects by id only; a sandbox mounts a volume by name.)
   *
   * @param name the volume's name
   * @return the volume, with its token
   * @throws VolumeNotFoundException when the account has no volume of that name
   */
  public Volume connectByName(String name) {
    Objects.requireNonNull(name, "name");
    VolumeInfo found = list().stream().filter(v -> v.name().equals(name)).findFirst()
        .orElseThrow(() -> new VolumeNotFoundException(name, null, "connect to volume named " + name));
    return connect(found.volumeId());
  }

  /**
   * Describes a volume with its token, as E2B's {@code Volume.getInfo(volumeId)} (its
   * {@code VolumeAndToken}); the same as {@link #connect(String)}.
   *
   * @param volumeId the volume's id
   * @return the volume, with its token and domain
   * @throws VolumeNotFoundException when the control plane has no such volume
   */
  public Volume getInfo(String volumeId) {
    return connect(volumeId);
  }

  /**
   * Lists the account's volumes, as E2B's {@code Volume.list()}.
   *
   * @return each volume's id and name
   */
  public List<VolumeInfo> list() {
    return api.listVolumes();
  }

  /**
   * Destroys a volume and its data, as E2B's {@code Volume.destroy(volumeId)}.
   *
   * @param volumeId the volume's id
   * @return false when there was no such volume
   */
  public boolean destroy(String volumeId) {
    return api.deleteVolume(volumeId);
  }

  private Volume volume(JsonNode v, String context) {
    String id;
    String name;
    String token;
    try {
      id = Json.requireText(v, "volumeID");
      name = Json.requireText(v, "name");
      token = Json.requireText(v, "token");
    } catch (IllegalArgumentException e) {
      // the message names the missing field only; the record itself may hold the token
      throw new SandboxException(context + ": a volume record of a shape this client cannot read: " + e.getMessage()
          .replaceAll(" in .*", ""));
    }
    String domain = Json.text(v, "domain");
    if (domain != null && domain.isBlank()) {
      domain = null;
    }
    return new Volume(id, name, token, domain, http, contentUrl(domain));
  }

  private URI contentUrl(@Nullable String domain) {
    if (contentUrl != null) {
      return contentUrl;
    }
    if (domain != null) {
      if (domain.contains("/") || domain.contains("@") || domain.contains(":")) {
        throw new SandboxException("the control plane named a volume domain this client will not use: '" + domain + "'");
      }
      return URI.create("https://api." + domain);
    }
    return api.provider().apiUrl();
  }
}
