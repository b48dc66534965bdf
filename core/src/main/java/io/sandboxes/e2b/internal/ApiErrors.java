package io.sandboxes.e2b.internal;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxAuthenticationException;
import io.sandboxes.SandboxNotEnoughSpaceException;
import io.sandboxes.SandboxRateLimitException;
import io.sandboxes.SandboxServiceBusyException;
import org.jspecify.annotations.Nullable;

/**
 * The exception for an error status of the control plane, as E2B's SDKs map them: 401 and 403 are
 * {@link SandboxAuthenticationException}, 429 {@link SandboxRateLimitException}, 503
 * {@link SandboxServiceBusyException}, 507 {@link SandboxNotEnoughSpaceException}, any other a
 * plain {@link SandboxApiException}. Used for answers and for the per-item errors inside one (a
 * fork's).
 */
public final class ApiErrors {
  private ApiErrors() {}

  public static SandboxApiException of(int status, @Nullable String message, String context) {
    return switch (status) {
      case 401, 403 -> new SandboxAuthenticationException(status, message, context);
      case 429 -> new SandboxRateLimitException(message, context, null, 0);
      case 503 -> new SandboxServiceBusyException(message, context);
      case 507 -> new SandboxNotEnoughSpaceException(message, context);
      default -> new SandboxApiException(status, message, context);
    };
  }
}
