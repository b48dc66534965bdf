package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxApiException;
import io.sandboxes.SandboxAuthenticationException;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxNotEnoughSpaceException;
import io.sandboxes.SandboxRateLimitException;
import io.sandboxes.SandboxServiceBusyException;
import io.sandboxes.e2b.ScriptedServer.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The control plane's error statuses and 429 retries, against a {@link ScriptedServer}: the local server never answers 429, 503 or 403, so these answers are
 * E2B's cloud's, written out here. Each answer is taken from a queue; when the queue is empty the
 * server answers an empty listing.
 */
class ApiErrorsAndRetriesTest {
  private static final String KEY = "e2b_retries0123456789abcdef";

  private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();
  private ScriptedServer server;

  @BeforeEach
  void start() {
    server = ScriptedServer.start(r -> {
      Answer a = script.poll();
      return a == null ? Answer.json(200, "[]") : a;
    });
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private E2BSandboxProvider provider(UnaryOperator<E2BSandboxProvider.Builder> configure) {
    URI url = server.url();
    return configure.apply(E2BSandboxProvider.builder().apiUrl(url).sandboxUrl(url).apiKey(KEY).environment(Map.of())).build();
  }

  private long listings() {
    return server.requests("GET", "/v2/sandboxes").size();
  }

  private static Duration since(long startNanos) {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }

  @Test
  @DisplayName("a 429 with Retry-After in seconds is waited out and sent again: two 429s of 1 s, then the page")
  void retriesAfterTheWaitAsked() {
    script.add(Answer.error(429, "slow down", "Retry-After", "1"));
    script.add(Answer.error(429, "slow down", "Retry-After", "1"));
    script.add(Answer.json(200, "[]"));
    try (E2BSandboxProvider e2b = provider(b -> b)) {
      long start = System.nanoTime();
      assertThat(e2b.api().list(SandboxQuery.all()).items()).isEmpty();
      assertThat(listings()).isEqualTo(3);
      // each resend came no sooner than the second it was asked to wait (with 50 ms for timer
      // granularity), and the whole call is not some longer fixed back-off
      assertThat(Duration.ofNanos(server.requests().get(1).arrivedNanos() - server.requests().get(0).arrivedNanos())).isGreaterThanOrEqualTo(Duration.ofMillis(950));
      assertThat(Duration.ofNanos(server.requests().get(2).arrivedNanos() - server.requests().get(1).arrivedNanos())).isGreaterThanOrEqualTo(Duration.ofMillis(950));
      assertThat(since(start)).isLessThan(Duration.ofSeconds(15));
    }
  }

  @Test
  @DisplayName("retries default to 3, as E2B's SDKs: the fourth 429 is thrown as SandboxRateLimitException saying so; retries(1) and withRetries(0) send 2 and 1")
  void retriesAreCounted() {
    try (E2BSandboxProvider e2b = provider(b -> b)) {
      assertThat(e2b.api().retries()).isEqualTo(3);
      for (int i = 0; i < 10; i++) {
        script.add(Answer.error(429, "too many", "Retry-After", "0"));
      }
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxRateLimitException.class, e -> {
            assertThat(e.statusCode()).isEqualTo(429);
            assertThat(e.retried()).isEqualTo(3);
            assertThat(e.retryAfter()).contains(Duration.ZERO);
            assertThat(e.serverMessage()).isEqualTo("too many");
          })
          .hasMessageContaining("after 3 retries");
      assertThat(listings()).isEqualTo(4);

      server.requests().clear();
      assertThatThrownBy(() -> e2b.api().withRetries(0).list(SandboxQuery.all())).isInstanceOf(SandboxRateLimitException.class);
      assertThat(listings()).as("withRetries(0): the one send").isEqualTo(1);
      assertThat(e2b.api().retries()).as("the provider's own setting is untouched").isEqualTo(3);
    }
    script.clear();
    for (int i = 0; i < 10; i++) {
      script.add(Answer.error(429, "too many", "Retry-After", "0"));
    }
    server.requests().clear();
    try (E2BSandboxProvider e2b = provider(b -> b.retries(1))) {
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxRateLimitException.class, e -> assertThat(e.retried()).isEqualTo(1));
      assertThat(listings()).isEqualTo(2);
    }
    assertThatThrownBy(() -> E2BSandboxProvider.builder().retries(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("a 429 without Retry-After, with a date, or with a malformed one is not retried (as E2B's SDKs): thrown at once, retryAfter empty")
  void unreadableRetryAfterIsNotRetried() {
    try (E2BSandboxProvider e2b = provider(b -> b)) {
      for (String[] header : List.of(new String[0], new String[] {"Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT"},
          new String[] {"Retry-After", "1.5"}, new String[] {"Retry-After", "-1"})) {
        server.requests().clear();
        script.add(Answer.error(429, "limited", header));
        script.add(Answer.json(200, "[]"));
        assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
            .as("Retry-After %s", List.of(header))
            .isInstanceOfSatisfying(SandboxRateLimitException.class, e -> {
              assertThat(e.retryAfter()).isEmpty();
              assertThat(e.retried()).isZero();
            });
        assertThat(listings()).isEqualTo(1);
        script.clear();
      }
    }
  }

  @Test
  @DisplayName("a wait that would outlast the request timeout is not taken: Retry-After 30 with a 2 s timeout is thrown at once")
  void waitBeyondTheTimeoutIsNotTaken() {
    script.add(Answer.error(429, "later", "Retry-After", "30"));
    try (E2BSandboxProvider e2b = provider(b -> b.requestTimeout(Duration.ofSeconds(2)))) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxRateLimitException.class, e -> {
            assertThat(e.retryAfter()).contains(Duration.ofSeconds(30));
            assertThat(e.retried()).isZero();
          });
      // a client that slept the 30 s (or even the 2 s) first cannot pass
      assertThat(since(start)).isLessThan(Duration.ofMillis(1_500));
      assertThat(listings()).isEqualTo(1);
    }
  }

  @Test
  @DisplayName("an interrupt during a retry's wait ends the call at once, with a SandboxException and the flag kept")
  void interruptDuringTheWait() throws Exception {
    script.add(Answer.error(429, "later", "Retry-After", "40"));
    try (E2BSandboxProvider e2b = provider(b -> b)) {
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicReference<Boolean> flag = new AtomicReference<>();
      Thread t = Thread.ofVirtual().start(() -> {
        try {
          e2b.api().list(SandboxQuery.all());
        } catch (Throwable e) {
          thrown.set(e);
        } finally {
          flag.set(Thread.currentThread().isInterrupted());
        }
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> listings() == 1);
      long interruptedAt = System.nanoTime();
      t.interrupt();
      t.join(Duration.ofSeconds(10));
      assertThat(t.isAlive()).isFalse();
      assertThat(since(interruptedAt)).isLessThan(Duration.ofSeconds(2));
      assertThat(thrown.get()).isInstanceOf(SandboxException.class).hasMessageContaining("interrupted");
      assertThat(flag.get()).isTrue();
      assertThat(listings()).as("no resend after the interrupt").isEqualTo(1);
    }
  }

  @Test
  @DisplayName("401 and 403 are SandboxAuthenticationException, 503 SandboxServiceBusyException (not retried), 500 a plain SandboxApiException")
  void typedStatuses() {
    try (E2BSandboxProvider e2b = provider(b -> b)) {
      script.add(Answer.error(401, "Invalid API key format"));
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxAuthenticationException.class, e -> assertThat(e.statusCode()).isEqualTo(401))
          .hasMessageContaining("Invalid API key format").hasMessageContaining("API key was refused")
          .hasMessageNotContaining(KEY);
      script.add(Answer.error(403, "team is banned"));
      assertThatThrownBy(() -> e2b.api().create())
          .isInstanceOfSatisfying(SandboxAuthenticationException.class, e -> assertThat(e.statusCode()).isEqualTo(403))
          .hasMessageContaining("team is banned");
      server.requests().clear();
      script.add(Answer.error(503, "no capacity", "Retry-After", "0"));
      script.add(Answer.json(200, "[]"));
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxServiceBusyException.class, e -> assertThat(e.statusCode()).isEqualTo(503))
          .hasMessageContaining("no capacity");
      assertThat(listings()).as("a 503 is not retried").isEqualTo(1);
      script.clear();
      script.add(Answer.error(500, "boom"));
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isExactlyInstanceOf(SandboxApiException.class)
          .satisfies(e -> assertThat(((SandboxApiException) e).statusCode()).isEqualTo(500));
      // E2B's per-fork errors are typed as answers are
      script.add(Answer.json(200, "[{\"error\":{\"code\":503,\"message\":\"no room\"}},{\"error\":{\"code\":507,\"message\":\"disk\"}}]"));
      List<ForkResult> forks = e2b.api().fork("sbx1", 2, Duration.ofMinutes(1));
      assertThat(forks.get(0).error()).isInstanceOf(SandboxServiceBusyException.class);
      assertThat(forks.get(1).error()).isInstanceOf(SandboxNotEnoughSpaceException.class);
    }
  }

  @Test
  @DisplayName("withRequestTimeout bounds this call only: 500 ms ends a 3 s answer early, the provider's own 30 s waits for it")
  void perCallRequestTimeout() {
    try (E2BSandboxProvider e2b = provider(b -> b.requestTimeout(Duration.ofSeconds(30)))) {
      E2BApi quick = e2b.api().withRequestTimeout(Duration.ofMillis(500));
      assertThat(quick.requestTimeout()).isEqualTo(Duration.ofMillis(500));
      script.add(Answer.json(200, "[]").after(Duration.ofSeconds(3)));
      long start = System.nanoTime();
      assertThatThrownBy(() -> quick.list(SandboxQuery.all())).isInstanceOf(SandboxException.class)
          .hasMessageContaining("no answer").hasMessageContaining("PT0.5S");
      // well under the 3 s answer: a view that kept the provider's timeout cannot pass
      assertThat(since(start)).isLessThan(Duration.ofMillis(2_500));

      script.add(Answer.json(200, "[]").after(Duration.ofSeconds(3)));
      start = System.nanoTime();
      assertThat(e2b.api().list(SandboxQuery.all()).items()).isEmpty();
      assertThat(since(start)).isGreaterThanOrEqualTo(Duration.ofMillis(2_900));
      assertThat(e2b.api().requestTimeout()).isEqualTo(Duration.ofSeconds(30));
      assertThatThrownBy(() -> e2b.api().withRequestTimeout(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  @DisplayName("retries share the call's deadline: with a 3 s timeout, 429s of 1 s are retried while the wait fits, then thrown")
  void retriesShareTheDeadline() {
    for (int i = 0; i < 10; i++) {
      script.add(Answer.error(429, "again", "Retry-After", "1"));
    }
    try (E2BSandboxProvider e2b = provider(b -> b.retries(10).requestTimeout(Duration.ofSeconds(3)))) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> e2b.api().list(SandboxQuery.all()))
          .isInstanceOfSatisfying(SandboxRateLimitException.class, e -> assertThat(e.retried()).isBetween(1, 2));
      // two or three sends within the 3 s (not the ten retries allowed), and the call is over
      // by then: the waits count against the one deadline
      assertThat(listings()).isBetween(2L, 3L);
      assertThat(since(start)).isLessThan(Duration.ofMillis(3_500));
    }
  }
}
