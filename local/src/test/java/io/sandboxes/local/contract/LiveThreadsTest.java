package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The leak detector the contract tests rely on finds what it is meant to find. */
class LiveThreadsTest {

  @Test
  @DisplayName("a parked virtual thread and a platform thread named after a sandbox are listed while alive, and not once they end")
  void findsLiveThreadsByName() throws Exception {
    String id = "ltt" + System.nanoTime();
    // parked in the JDK's code alone (a method reference has no frame of its own), as a leaked
    // SDK timer would be parked outside the local server's code
    Semaphore stop = new Semaphore(0);
    Runnable park = stop::acquireUninterruptibly;
    Thread virtual = Thread.ofVirtual().name("sandboxes-watchdog-" + id).start(park);
    Thread platform = Thread.ofPlatform().daemon().name("reader-" + id).start(park);
    assertThat(LiveThreads.client(id)).hasSize(2)
        .anyMatch(t -> t.startsWith("sandboxes-watchdog-" + id + " at "))
        .anyMatch(t -> t.startsWith("reader-" + id + " at "));
    assertThat(LiveThreads.of(id)).containsExactlyInAnyOrder("sandboxes-watchdog-" + id, "reader-" + id);
    stop.release(2);
    virtual.join();
    platform.join();
    assertThat(LiveThreads.of(id)).isEmpty();
  }

  @Test
  @DisplayName("a thread running the local server's code is not the client's")
  void serverThreadsAreNotTheClients() throws Exception {
    String id = "ltt" + System.nanoTime();
    java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
    Thread t = Thread.ofVirtual().name("server-side-" + id).start(() -> {
      try {
        stop.await(); // this lambda is io.sandboxes.local code
      } catch (InterruptedException ignored) {
        // ends
      }
    });
    try {
      assertThat(LiveThreads.of(id)).containsExactly("server-side-" + id);
      assertThat(LiveThreads.client(id)).isEmpty();
    } finally {
      stop.countDown();
      t.join();
    }
  }
}
