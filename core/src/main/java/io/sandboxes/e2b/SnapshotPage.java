package io.sandboxes.e2b;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One page of a snapshot listing, as a page of E2B's {@code SnapshotPaginator}.
 *
 * @param items the snapshots on this page, in the server's order
 * @param nextTokenValue the token for the next page, or null when this is the last
 * @since 0.1
 */
public record SnapshotPage(List<SnapshotInfo> items, @Nullable String nextTokenValue) {

  /** Copies the components. */
  public SnapshotPage {
    items = List.copyOf(Objects.requireNonNull(items, "items"));
    if (nextTokenValue != null && nextTokenValue.isEmpty()) {
      throw new IllegalArgumentException("nextTokenValue must not be empty; use null for the last page");
    }
  }

  /**
   * Returns the token for the next page, for {@link SnapshotQuery#withNextToken(String)}.
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
