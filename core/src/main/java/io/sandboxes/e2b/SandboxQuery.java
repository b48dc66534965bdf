package io.sandboxes.e2b;

import io.sandboxes.SandboxState;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A listing filter, as E2B's {@code Sandbox.list({query, order, limit, nextToken})}: which states,
 * which metadata, started when, from which template, in which order, how many per page, and where
 * to continue. Every filter narrows the result (they combine with AND); the order applies to the
 * whole result before it is cut into pages, and a page token continues in the order it was
 * handed out for (the server refuses a token used with the other order).
 *
 * @param states the states to include ({@code RUNNING}, {@code PAUSED}); empty means both
 * @param metadata pairs a sandbox's metadata must all contain
 * @param limit page size, 1 to 100
 * @param nextToken the token of the page to fetch, from {@link SandboxPage#nextToken()}, or null
 *     for the first page
 * @param startedAfter only sandboxes started at or after this moment, or null for any (sent at
 *     whole-second precision or finer, as RFC 3339)
 * @param template only sandboxes made from this template (an id, or an alias such as
 *     {@code base}), or null for any
 * @param order by start time: {@link Order#DESC} (newest first, E2B's default) or {@link Order#ASC}
 * @since 0.1
 */
public record SandboxQuery(Set<SandboxState> states, Map<String, String> metadata, int limit, @Nullable String nextToken,
    @Nullable Instant startedAfter, @Nullable String template, Order order) {

  /**
   * The order of a listing, by the time each sandbox started.
   *
   * @since 0.1
   */
  public enum Order {
    /** Oldest first. */
    ASC,
    /** Newest first: E2B's default. */
    DESC
  }

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
    if (template != null && template.isBlank()) {
      throw new IllegalArgumentException("template must not be blank; use null for any template");
    }
    Objects.requireNonNull(order, "order");
  }

  /**
   * A query with no start-time or template filter, newest first.
   *
   * @param states the states to include; empty means both
   * @param metadata pairs a sandbox's metadata must all contain
   * @param limit page size, 1 to 100
   * @param nextToken the token of the page to fetch, or null for the first page
   */
  public SandboxQuery(Set<SandboxState> states, Map<String, String> metadata, int limit, @Nullable String nextToken) {
    this(states, metadata, limit, nextToken, null, null, Order.DESC);
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
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }

  /**
   * Returns a copy that keeps only sandboxes whose metadata holds all these pairs.
   *
   * @param metadata pairs to match
   * @return a copy with them
   */
  public SandboxQuery withMetadata(Map<String, String> metadata) {
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }

  /**
   * Returns a copy with another page size.
   *
   * @param limit page size, 1 to 100
   * @return a copy with it
   */
  public SandboxQuery withLimit(int limit) {
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }

  /**
   * Returns a copy that reads the page this token points at.
   *
   * @param nextToken where to continue, or null for the first page
   * @return a copy with it
   */
  public SandboxQuery withNextToken(@Nullable String nextToken) {
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }

  /**
   * Returns a copy that keeps only sandboxes started at or after this moment.
   *
   * @param startedAfter the earliest start time, or null for any
   * @return a copy with it
   */
  public SandboxQuery withStartedAfter(@Nullable Instant startedAfter) {
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }

  /**
   * Returns a copy that keeps only sandboxes made from this template.
   *
   * @param template a template id or alias, or null for any
   * @return a copy with it
   */
  public SandboxQuery withTemplate(@Nullable String template) {
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }

  /**
   * Returns a copy listed in this order; a page token from the other order does not carry over.
   *
   * @param order by start time, oldest or newest first
   * @return a copy with it
   */
  public SandboxQuery withOrder(Order order) {
    return new SandboxQuery(states, metadata, limit, nextToken, startedAfter, template, order);
  }
}
