package io.sandboxes.local.internal.http;

import io.sandboxes.local.internal.common.RpcError;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One API's routes, in order: each a method (or any), a path pattern the whole path must match,
 * and what answers it. The first route whose method and pattern match and that takes the request
 * answers it; a route may decline (as a Jetty handler returns false), and the next matching one
 * is asked. A request no route takes is left to the caller (the control plane's 501).
 */
final class RouteTable {
  /** Answers a matched request, or declines it for the routes after it. */
  interface Route {
    /**
     * @param path the path's match, its groups the pattern's
     * @return whether the request is answered (false: the next route is asked)
     */
    boolean handle(Exchange ex, Matcher path) throws RpcError, IOException;
  }

  /** Answers every request it matches. */
  interface Answer {
    void answer(Exchange ex, Matcher path) throws RpcError, IOException;
  }

  private record Entry(@Nullable String method, Pattern path, Route route) {}

  private final List<Entry> entries;

  private RouteTable(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  static Builder builder() {
    return new Builder();
  }

  /**
   * Asks the matching routes in order.
   *
   * @return whether one answered
   */
  boolean dispatch(Exchange ex) throws RpcError, IOException {
    String method = ex.method();
    String path = ex.path();
    for (Entry e : entries) {
      if (e.method() != null && !e.method().equals(method)) {
        continue;
      }
      Matcher m = e.path().matcher(path);
      if (m.matches() && e.route().handle(ex, m)) {
        return true;
      }
    }
    return false;
  }

  /** Adds routes in the order they are asked. */
  static final class Builder {
    private final List<Entry> entries = new ArrayList<>();

    private Builder() {}

    /** A route for one method that answers every request it matches. */
    Builder on(String method, String pathRegex, Answer answer) {
      return add(method, pathRegex, (ex, m) -> {
        answer.answer(ex, m);
        return true;
      });
    }

    /** A route for any method that answers every request it matches (a 405, say). */
    Builder any(String pathRegex, Answer answer) {
      return add(null, pathRegex, (ex, m) -> {
        answer.answer(ex, m);
        return true;
      });
    }

    /**
     * A route that may decline.
     *
     * @param method the method, or null for any
     */
    Builder add(@Nullable String method, String pathRegex, Route route) {
      entries.add(new Entry(method, Pattern.compile(pathRegex, Pattern.DOTALL), route));
      return this;
    }

    RouteTable build() {
      return new RouteTable(entries);
    }
  }
}
