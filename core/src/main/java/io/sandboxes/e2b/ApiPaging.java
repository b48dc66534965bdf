package io.sandboxes.e2b;

import io.sandboxes.SandboxInfo;
import io.sandboxes.e2b.internal.PageGuard;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads every page of a listing for {@link E2BApi}, starting from the first whatever the query's
 * token, and stops a server that loops ({@link PageGuard}): a page that cannot be read fails the
 * whole listing, never a partial list.
 */
final class ApiPaging {
  private ApiPaging() {}

  static List<SandboxInfo> sandboxes(E2BApi api, SandboxQuery query) {
    List<SandboxInfo> all = new ArrayList<>();
    SandboxQuery q = query.withNextToken(null);
    PageGuard guard = new PageGuard("list sandboxes");
    while (true) {
      SandboxPage page = api.list(q);
      all.addAll(page.items());
      if (!guard.next(page.nextTokenValue())) {
        return all;
      }
      q = q.withNextToken(page.nextTokenValue());
    }
  }

  static List<SnapshotInfo> snapshots(E2BApi api, SnapshotQuery query) {
    List<SnapshotInfo> all = new ArrayList<>();
    SnapshotQuery q = query.withNextToken(null);
    PageGuard guard = new PageGuard("list snapshots");
    while (true) {
      SnapshotPage page = api.listSnapshots(q);
      all.addAll(page.items());
      String next = page.nextTokenValue();
      if (!guard.next(next)) {
        return all;
      }
      q = q.withNextToken(next);
    }
  }
}
