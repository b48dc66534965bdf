package io.sandboxes.snippets;

import io.sandboxes.local.LocalServer;

/**
 * The code examples in the local runtime's Javadoc. Each {@code {@snippet class=... region=...}}
 * there shows a region of this file, and javadoc fails when its inline copy differs from the
 * region; this file is compiled with the tests, so an example that calls a method that does not
 * exist fails the build. Starting a server needs Docker, so the example is compiled, not run
 * (the module's tests start servers the same way).
 */
final class LocalSnippets {
  private LocalSnippets() {}

  static void localServer() {
    // @start region="local-server" :
    try (LocalServer server = LocalServer.builder().build().start()) {
      System.out.println("E2B_API_URL=" + server.apiUrl());
    }
    // @end
  }
}
