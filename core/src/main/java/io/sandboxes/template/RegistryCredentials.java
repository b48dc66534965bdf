package io.sandboxes.template;

import io.sandboxes.e2b.internal.Secrets;
import java.util.Objects;

/**
 * How E2B's builder signs in to a private registry to pull a template's base image: E2B's three
 * kinds ({@code registry}, {@code aws}, {@code gcp}). The secret parts are held for redaction:
 * {@code toString()} never shows them, and an exception the SDK makes from a server's answer has
 * them replaced. The local runtime pulls nothing and refuses a build that carries credentials.
 *
 * @since 0.1
 */
public sealed interface RegistryCredentials {

  /**
   * A user name and password for a Docker registry, as E2B's {@code fromImage(image, {username, password})}.
   *
   * @param username the registry user
   * @param password the password or access token
   */
  record Basic(String username, String password) implements RegistryCredentials {
    /** Validates the components and holds the password for redaction. */
    public Basic {
      requireText(username, "username");
      requireText(password, "password");
      Secrets.hold(Objects.requireNonNull(password), password);
    }

    @Override
    public String toString() {
      return "Basic[username=" + username + ", password=" + Secrets.MASK + "]";
    }
  }

  /**
   * AWS ECR credentials, as E2B's {@code fromAWSRegistry}.
   *
   * @param accessKeyId the access key id
   * @param secretAccessKey the secret access key
   * @param region the registry's region, e.g. {@code us-east-1}
   */
  record Aws(String accessKeyId, String secretAccessKey, String region) implements RegistryCredentials {
    /** Validates the components and holds the secret key for redaction. */
    public Aws {
      requireText(accessKeyId, "accessKeyId");
      requireText(secretAccessKey, "secretAccessKey");
      requireText(region, "region");
      Secrets.hold(Objects.requireNonNull(secretAccessKey), secretAccessKey);
    }

    @Override
    public String toString() {
      return "Aws[accessKeyId=" + accessKeyId + ", secretAccessKey=" + Secrets.MASK + ", region=" + region + "]";
    }
  }

  /**
   * A Google Cloud service account, as E2B's {@code fromGCPRegistry}.
   *
   * @param serviceAccountJson the service account's JSON key, as text
   */
  record Gcp(String serviceAccountJson) implements RegistryCredentials {
    /** Validates the key and holds it for redaction. */
    public Gcp {
      requireText(serviceAccountJson, "serviceAccountJson");
      Secrets.hold(Objects.requireNonNull(serviceAccountJson), serviceAccountJson);
    }

    @Override
    public String toString() {
      return "Gcp[serviceAccountJson=" + Secrets.MASK + "]";
    }
  }

  private static void requireText(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + " must not be blank");
    }
  }
}
