package io.sandboxes.e2b;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One page of {@link E2BSecrets#list(int, String)}.
 *
 * @param secrets the secrets on this page
 * @param nextToken the token of the next page, or null when this is the last
 * @since 0.1
 */
public record SecretPage(List<SecretInfo> secrets, @Nullable String nextToken) {

  /** Copies the list. */
  public SecretPage {
    secrets = List.copyOf(secrets);
  }

  /**
   * Says whether there is another page.
   *
   * @return true when {@link #nextToken()} is set
   */
  public boolean hasNext() {
    return nextToken != null;
  }
}
