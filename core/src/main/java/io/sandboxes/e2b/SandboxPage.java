package io.sandboxes.e2b;

import io.sandboxes.SandboxInfo;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One page of a sandbox listing.
 *
 * @param items the sandboxes on this page, in the server's order
 * @param nextTokenValue the token for the next page, or null when this is the last
 * @since 0.1
 */
public record SandboxPage(List<SandboxInfo> items, @Nullable String nextTokenValue) {

  /** Copies the components. */
  public SandboxPage {
    items = List.copyOf(Objects.requireNonNull(items, "items"));
  }

  /**
   * Returns the token for the next page, for {@link SandboxQuery#withNextToken(String)}.
   *
   * @return the token for the next page; empty when this page is the last
   */
  public Optional<String> nextToken() {
    return Optional.ofNullable(nextTokenValue);
  }

  /**
   * Tells whether another page follows.
   *
   * @return whether another page follows
   */
  public boolean hasNext() {
    return nextTokenValue != null;
  }
}
