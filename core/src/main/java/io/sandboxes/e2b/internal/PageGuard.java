package io.sandboxes.e2b.internal;

import io.sandboxes.SandboxException;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Keeps one paged listing finite: a next-page token the server already handed out in this listing
 * means the server is looping (reading on would fetch the same rows forever and pile up
 * duplicates), and so does a listing longer than {@link #MAX_PAGES} pages. Both throw.
 *
 * <p>Why 10,000 pages: E2B pages hold up to 100 rows, so that is a million sandboxes or snapshots,
 * far beyond what one team can hold (E2B caps concurrent sandboxes per team in the hundreds to
 * low thousands), while a looping server is stopped in seconds to minutes instead of never. Even a
 * caller paging 1 row at a time reads 10,000 rows before the guard trips.
 */
public final class PageGuard {
  /** The most pages one listing may have before it is taken for a server that never ends it. */
  public static final int MAX_PAGES = 10_000;

  private final String context;
  private final int maxPages;
  private final Set<String> seen = new HashSet<>();
  private int pages;

  public PageGuard(String context) {
    this(context, MAX_PAGES);
  }

  PageGuard(String context, int maxPages) {
    this.context = context;
    this.maxPages = maxPages;
  }

  /**
   * Records that one page was read and that the server named {@code nextToken} as the next one.
   *
   * @param nextToken the token of the page to read next, or null when the listing ended
   * @return true when there is a next page to read
   * @throws SandboxException when the token was already handed out in this listing, or this
   *     would be page {@code MAX_PAGES + 1}
   */
  public boolean next(@Nullable String nextToken) {
    pages++;
    if (nextToken == null) {
      return false;
    }
    if (!seen.add(nextToken)) {
      throw new SandboxException(context + ": the server handed out next-page token '" + Json.abbreviate(nextToken)
          + "' a second time after " + pages + " page(s); it is looping, so the listing was stopped rather than read forever");
    }
    if (pages >= maxPages) {
      throw new SandboxException(context + ": the server still named a next page after " + pages
          + " pages, more than any real listing has (the limit is " + maxPages + "); the listing was stopped");
    }
    return true;
  }
}
