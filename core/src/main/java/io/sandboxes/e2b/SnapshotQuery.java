package io.sandboxes.e2b;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot listing filter, as E2B's {@code Sandbox.listSnapshots({sandboxId, name, limit,
 * nextToken})}: of which sandbox, under which name, how many per page, and where to continue.
 *
 * {@snippet class=io.sandboxes.snippets.CoreSnippets region=snapshot-pages :
 * SnapshotPage page = e2b.listSnapshots(SnapshotQuery.all().withLimit(10));
 * while (page.hasNext()) {
 *   page = e2b.listSnapshots(SnapshotQuery.all().withLimit(10).withNextToken(page.nextTokenValue()));
 * }
 * }
 *
 * @param sandboxId only snapshots taken of this sandbox, or null for all
 * @param name only snapshots with this name (it may carry a tag, {@code name:tag}), or null for all
 * @param limit page size, 1 to {@link SandboxQuery#MAX_LIMIT}
 * @param nextToken the token of the page to fetch, from {@link SnapshotPage#nextToken()}, or null
 *     for the first page
 * @since 0.1
 */
public record SnapshotQuery(@Nullable String sandboxId, @Nullable String name, int limit, @Nullable String nextToken) {

  /** Validates the components. */
  public SnapshotQuery {
    if (sandboxId != null && sandboxId.isBlank()) {
      throw new IllegalArgumentException("sandboxId must not be blank; use null for every sandbox");
    }
    if (name != null && name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank; use null for every name");
    }
    if (limit < 1 || limit > SandboxQuery.MAX_LIMIT) {
      throw new IllegalArgumentException("limit must be between 1 and " + SandboxQuery.MAX_LIMIT + ", got " + limit);
    }
    if (nextToken != null && nextToken.isEmpty()) {
      throw new IllegalArgumentException("nextToken must not be empty; use null for the first page");
    }
  }

  /**
   * A query for every snapshot, 100 a page.
   *
   * @return the query
   */
  public static SnapshotQuery all() {
    return new SnapshotQuery(null, null, SandboxQuery.MAX_LIMIT, null);
  }

  /**
   * Returns a copy that keeps only the snapshots of this sandbox.
   *
   * @param sandboxId the sandbox's id, or null for every sandbox
   * @return a copy with it
   */
  public SnapshotQuery withSandboxId(@Nullable String sandboxId) {
    return new SnapshotQuery(sandboxId, name, limit, nextToken);
  }

  /**
   * Returns a copy that keeps only the snapshots with this name.
   *
   * @param name the name, or null for every name
   * @return a copy with it
   */
  public SnapshotQuery withName(@Nullable String name) {
    return new SnapshotQuery(sandboxId, name, limit, nextToken);
  }

  /**
   * Returns a copy with another page size.
   *
   * @param limit page size, 1 to 100
   * @return a copy with it
   */
  public SnapshotQuery withLimit(int limit) {
    return new SnapshotQuery(sandboxId, name, limit, nextToken);
  }

  /**
   * Returns a copy that reads the page this token points at.
   *
   * @param nextToken where to continue, or null for the first page
   * @return a copy with it
   */
  public SnapshotQuery withNextToken(@Nullable String nextToken) {
    return new SnapshotQuery(sandboxId, name, limit, nextToken);
  }
}
