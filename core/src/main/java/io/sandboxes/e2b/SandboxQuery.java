package io.sandboxes.e2b;

import io.sandboxes.SandboxState;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A listing filter: which states, which metadata, how many per page, and where to continue.
 *
 * @param states the states to include ({@code RUNNING}, {@code PAUSED}); empty means both
 * @param metadata pairs a sandbox's metadata must all contain
 * @param limit page size, 1 to 100
 * @param nextToken the token of the page to fetch, from {@link SandboxPage#nextToken()}, or null
 *     for the first page
 * @since 0.1
 */
public record SandboxQuery(Set<SandboxState> states, Map<String, String> metadata, int limit, @Nullable String nextToken) {

  /** The largest page the control plane serves. */
  public static final int MAX_LIMIT = 100;

  /** Validates and copies the components. */
  public SandboxQuery {
    states = Set.copyOf(Objects.requireNonNull(states, "states"));
    if (states.contains(SandboxState.KILLED)) {
      throw new IllegalArgumentException("a listing shows running and paused sandboxes; KILLED is not a state to filter on");
    }
    metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be between 1 and " + MAX_LIMIT + ", got " + limit);
    }
    if (nextToken != null && nextToken.isEmpty()) {
      throw new IllegalArgumentException("nextToken must not be empty; use null for the first page");
    }
  }

  /**
   * A query for every sandbox, running and paused, 100 a page.
   *
   * @return the query
   */
  public static SandboxQuery all() {
    return new SandboxQuery(EnumSet.noneOf(SandboxState.class), Map.of(), MAX_LIMIT, null);
  }

  /**
   * A query for the sandboxes in these states.
   *
   * @param first a state ({@code RUNNING} or {@code PAUSED})
   * @param more further states
   * @return the query, 100 a page
   */
  public static SandboxQuery inState(SandboxState first, SandboxState... more) {
    return all().withStates(EnumSet.of(first, more));
  }

  /**
   * A query for the sandboxes whose metadata holds this pair.
   *
   * @param key a metadata key
   * @param value its value
   * @return the query, 100 a page
   */
  public static SandboxQuery byMetadata(String key, String value) {
    return all().withMetadata(Map.of(key, value));
  }

  /**
   * Returns a copy that keeps only sandboxes in these states.
   *
   * @param states the states to include
   * @return a copy with them
   */
  public SandboxQuery withStates(Set<SandboxState> states) {
    return new SandboxQuery(states, metadata, limit, nextToken);
  }

  /**
   * Returns a copy that keeps only sandboxes whose metadata holds all these pairs.
   *
   * @param metadata pairs to match
   * @return a copy with them
   */
  public SandboxQuery withMetadata(Map<String, String> metadata) {
    return new SandboxQuery(states, metadata, limit, nextToken);
  }

  /**
   * Returns a copy with another page size.
   *
   * @param limit page size, 1 to 100
   * @return a copy with it
   */
  public SandboxQuery withLimit(int limit) {
    return new SandboxQuery(states, metadata, limit, nextToken);
  }

  /**
   * Returns a copy that reads the page this token points at.
   *
   * @param nextToken where to continue, or null for the first page
   * @return a copy with it
   */
  public SandboxQuery withNextToken(@Nullable String nextToken) {
    return new SandboxQuery(states, metadata, limit, nextToken);
  }
}
