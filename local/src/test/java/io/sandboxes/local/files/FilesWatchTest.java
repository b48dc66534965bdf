package io.sandboxes.local.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.FileChange;
import io.sandboxes.SandboxFileNotFoundException;
import io.sandboxes.SandboxRpcException;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.FilesystemEvent;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.WatchHandle;
import io.sandboxes.e2b.WatchOptions;
import io.sandboxes.local.SharedServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 24 item 2: {@code files().watchDir} against the real local server: recursive or not,
 * events with their entries ({@code includeEntry}), its deadline, stopping, a listener that
 * throws, and the exit listener told which of these ended the watch.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FilesWatchTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private LiveSandbox sandbox;
  private E2BApi e2b;

  @BeforeAll
  void start(E2BApi e2b) {
    this.e2b = e2b;
    sandbox = e2b.create();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  /** What the exit listener heard: empty until it was called, then the failure or none. */
  private static final class Exit {
    final AtomicReference<Optional<Throwable>> heard = new AtomicReference<>();

    WatchOptions on(WatchOptions o) {
      return o.withOnExit(t -> heard.set(Optional.ofNullable(t)));
    }
  }

  @Test
  @DisplayName("a watch that is not recursive sees its folder's children only; a recursive one sees the tree; stop ends it with onExit(null)")
  void recursion() {
    sandbox.exec("mkdir -p /home/user/w1/sub /home/user/w2/sub");
    List<FilesystemEvent> flat = new CopyOnWriteArrayList<>();
    List<FilesystemEvent> deep = new CopyOnWriteArrayList<>();
    Exit exit = new Exit();
    WatchHandle flatWatch = sandbox.files().watchDir("/home/user/w1", flat::add, exit.on(WatchOptions.defaults()));
    try (WatchHandle deepWatch = sandbox.files().watchDir("/home/user/w2", deep::add, WatchOptions.defaults().withRecursive(true))) {
      sandbox.exec("echo x > /home/user/w1/sub/inner.txt; echo x > /home/user/w1/top.txt;"
          + " echo x > /home/user/w2/sub/inner.txt; echo x > /home/user/w2/top.txt");
      // every event the assertions below look for: the recursive watch's top.txt can come after its sub/inner.txt
      await().atMost(WAIT).until(() -> deep.stream().anyMatch(e -> e.name().equals("sub/inner.txt"))
          && deep.stream().anyMatch(e -> e.name().equals("top.txt") && e.type() == FileChange.Kind.CREATE)
          && flat.stream().anyMatch(e -> e.name().equals("top.txt")));
      assertThat(flat).noneMatch(e -> e.name().contains("inner"));
      assertThat(flatWatch.isRunning()).isTrue();
    }
    flatWatch.stop();
    assertThat(flatWatch.isRunning()).isFalse();
    await().atMost(WAIT).until(() -> exit.heard.get() != null);
    assertThat(exit.heard.get()).isEmpty();
  }

  @Test
  @DisplayName("includeEntry: a write's event carries the file's entry (path, size); without it, none")
  void includeEntry() {
    sandbox.exec("mkdir -p /home/user/we");
    List<FilesystemEvent> with = new CopyOnWriteArrayList<>();
    List<FilesystemEvent> without = new CopyOnWriteArrayList<>();
    try (WatchHandle a = sandbox.files().watchDir("/home/user/we", with::add, WatchOptions.defaults().withIncludeEntry(true));
        WatchHandle b = sandbox.files().watchDir("/home/user/we", without::add)) {
      sandbox.files().write("/home/user/we/seen.txt", "twelve bytes");
      await().atMost(WAIT).until(() -> with.stream().anyMatch(e -> e.name().equals("seen.txt") && e.entry() != null
          && Long.valueOf(12).equals(e.entry().size())) && without.stream().anyMatch(e -> e.name().equals("seen.txt")));
      FilesystemEvent e = with.stream().filter(x -> x.name().equals("seen.txt") && x.entry() != null).findFirst().orElseThrow();
      assertThat(e.entry().path()).isEqualTo("/home/user/we/seen.txt");
      assertThat(without).allMatch(x -> x.entry() == null);
    }
  }

  @Test
  @DisplayName("a watch with a deadline ends at it, and onExit hears deadline_exceeded")
  void deadline() {
    sandbox.exec("mkdir -p /home/user/wd");
    Exit exit = new Exit();
    WatchHandle w = sandbox.files().watchDir("/home/user/wd", e -> { }, exit.on(WatchOptions.defaults().withTimeout(Duration.ofSeconds(2))));
    await().atMost(WAIT).until(() -> exit.heard.get() != null);
    assertThat(exit.heard.get()).get().isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("deadline_exceeded"));
    assertThat(w.isRunning()).isFalse();
  }

  @Test
  @DisplayName("a watch whose folder is deleted hears it as E2B's envd reports it, a removal named \".\", and goes on until stopped, as envd's does")
  void folderDeleted() {
    sandbox.exec("mkdir -p /home/user/wgone/sub && touch /home/user/wgone/a.txt");
    List<FilesystemEvent> flat = new CopyOnWriteArrayList<>();
    List<FilesystemEvent> deep = new CopyOnWriteArrayList<>();
    Exit exit = new Exit();
    try (WatchHandle f = sandbox.files().watchDir("/home/user/wgone", flat::add, exit.on(WatchOptions.defaults()));
        WatchHandle d = sandbox.files().watchDir("/home/user/wgone", deep::add, WatchOptions.defaults().withRecursive(true))) {
      sandbox.exec("rm -rf /home/user/wgone");
      await().atMost(WAIT).until(() -> flat.stream().anyMatch(e -> e.name().equals(".")) && deep.stream().anyMatch(e -> e.name().equals(".")));
      assertThat(flat).filteredOn(e -> e.name().equals(".")).singleElement().satisfies(e -> assertThat(e.type()).isEqualTo(FileChange.Kind.REMOVE));
      // the sub-folder's own end is its parent's removal of "sub", reported once
      assertThat(deep).filteredOn(e -> e.name().equals("sub") && e.type() == FileChange.Kind.REMOVE).hasSize(1);
      assertThat(deep).filteredOn(e -> e.name().equals(".")).hasSize(1);
      assertThat(f.isRunning()).isTrue();
      assertThat(exit.heard.get()).isNull();
    }
    await().atMost(WAIT).until(() -> exit.heard.get() != null);
    assertThat(exit.heard.get()).isEmpty();
  }

  @Test
  @DisplayName("a watch whose sandbox is killed breaks off, as E2B's does, and onExit hears that the sandbox is gone")
  void sandboxKilled() {
    LiveSandbox doomed = e2b.create();
    Exit killed = new Exit();
    List<FilesystemEvent> seen = new CopyOnWriteArrayList<>();
    doomed.exec("mkdir -p /home/user/wk");
    WatchHandle w = doomed.files().watchDir("/home/user/wk", seen::add, killed.on(WatchOptions.defaults()));
    doomed.exec("touch /home/user/wk/before");
    await().atMost(WAIT).until(() -> !seen.isEmpty());
    doomed.kill();
    await().atMost(WAIT).until(() -> killed.heard.get() != null);
    assertThat(killed.heard.get()).get().isInstanceOfSatisfying(io.sandboxes.SandboxNotFoundException.class,
        e -> assertThat(e.getMessage()).contains("killed or reached its end of life while the watch was running"));
    assertThat(w.isRunning()).isFalse();
  }

  @Test
  @DisplayName("a listener that throws ends the watch, and onExit hears its exception")
  void listenerThrows() {
    sandbox.exec("mkdir -p /home/user/wt");
    Exit exit = new Exit();
    IllegalStateException boom = new IllegalStateException("listener failed");
    WatchHandle w = sandbox.files().watchDir("/home/user/wt", e -> {
      throw boom;
    }, exit.on(WatchOptions.defaults()));
    sandbox.exec("touch /home/user/wt/a");
    await().atMost(WAIT).until(() -> exit.heard.get() != null);
    assertThat(exit.heard.get()).containsSame(boom);
    assertThat(w.isRunning()).isFalse();
    w.stop();
  }

  @Test
  @DisplayName("watching what is not there is not found; a file, an invalid argument; a negative deadline is refused")
  void refusals() {
    sandbox.files().write("/home/user/wfile", "x");
    assertThatThrownBy(() -> sandbox.files().watchDir("/home/user/no-such-dir", e -> { })).isInstanceOf(SandboxFileNotFoundException.class);
    assertThatThrownBy(() -> sandbox.files().watchDir("/home/user/wfile", e -> { }))
        .isInstanceOfSatisfying(SandboxRpcException.class, e -> assertThat(e.code()).isEqualTo("invalid_argument"));
    assertThatThrownBy(() -> WatchOptions.defaults().withTimeout(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> sandbox.files().watchDir("/home/user", null)).isInstanceOf(NullPointerException.class);
  }
}
