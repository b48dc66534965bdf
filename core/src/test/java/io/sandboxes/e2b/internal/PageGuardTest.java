package io.sandboxes.e2b.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.SandboxException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class PageGuardTest {

  @Test
  @DisplayName("issue 12 item 6: 10,000 pages with fresh tokens are read; a server naming page 10,001 is stopped")
  void pageBound() {
    PageGuard guard = new PageGuard("list sandboxes");
    for (int page = 1; page < PageGuard.MAX_PAGES; page++) {
      assertThat(guard.next("t" + page)).isTrue();
    }
    assertThatThrownBy(() -> guard.next("t" + PageGuard.MAX_PAGES))
        .isInstanceOf(SandboxException.class).hasMessageContaining("10000 pages").hasMessageContaining("list sandboxes");
  }

  @Test
  @DisplayName("issue 12 item 6: the last page (no token) ends a listing at the bound without an error")
  void lastPageAtTheBound() {
    PageGuard guard = new PageGuard("list snapshots");
    for (int page = 1; page < PageGuard.MAX_PAGES; page++) {
      guard.next("t" + page);
    }
    assertThat(guard.next(null)).isFalse();
  }

  @Test
  @DisplayName("issue 12 item 6: a token handed out before in the same listing throws, naming it")
  void repeat() {
    PageGuard guard = new PageGuard("list sandboxes");
    assertThat(guard.next("a")).isTrue();
    assertThat(guard.next("b")).isTrue();
    assertThatThrownBy(() -> guard.next("a")).isInstanceOf(SandboxException.class).hasMessageContaining("'a' a second time");
  }
}
