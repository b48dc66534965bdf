package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.TemplateDescriptor;
import io.sandboxes.VolumeDescriptor;
import io.sandboxes.VolumeQuery;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Behaviour contract, section C: listing, against the real local server and scripted listings. */
@ExtendWith(SharedServer.class)
class ListingCasesTest {

  static String row(String id, String state) {
    return "{\"sandboxID\":\"" + id + "\",\"templateID\":\"base\",\"clientID\":\"x\",\"state\":\"" + state + "\","
        + "\"startedAt\":\"2026-08-15T10:00:00Z\",\"endAt\":\"2026-08-15T11:00:00Z\",\"cpuCount\":2,\"memoryMB\":512,"
        + "\"envdVersion\":\"0.6.13\",\"metadata\":{}}";
  }

  static String sandbox(String id) {
    return "{\"sandboxID\":\"" + id + "\",\"templateID\":\"base\",\"clientID\":\"x\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"t\"}";
  }

  static String listing(List<String> ids) {
    return "[" + String.join(",", ids.stream().map(id -> row(id, "running")).toList()) + "]";
  }

  static List<String> ids(int n) {
    return IntStream.range(0, n).mapToObj(i -> String.format("row%017d", i)).toList();
  }

  /** Answers a record read (how a listing makes each handle) for a scripted id after {@code work}, counting those in flight. */
  static FaultServer.Fault slowConnect(AtomicInteger inFlight, AtomicInteger peak, AtomicInteger total, Runnable work) {
    return (req, resp, cb) -> {
      int now = inFlight.incrementAndGet();
      peak.accumulateAndGet(now, Math::max);
      total.incrementAndGet();
      try {
        work.run();
      } finally {
        inFlight.decrementAndGet();
      }
      String id = req.path().split("/")[2];
      return FaultServer.json(200, sandbox(id)).answer(req, resp, cb);
    };
  }

  /** Runs {@code provider.list()} on its own thread, giving back the ids it lists. */
  static CompletableFuture<List<String>> listInBackground(Harness h) {
    CompletableFuture<List<String>> out = new CompletableFuture<>();
    Thread.ofVirtual().name("test-list").start(() -> {
      try {
        out.complete(h.provider.list().stream().map(Sandbox::id).toList());
      } catch (Throwable t) {
        out.completeExceptionally(t);
      }
    });
    return out;
  }

  @Test
  @DisplayName("case 30: 40 running rows come back in listing order through a window of exactly 16 connects, a freed slot starting exactly one more")
  void window(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(40);
      AtomicInteger inFlight = new AtomicInteger();
      AtomicInteger peak = new AtomicInteger();
      AtomicInteger total = new AtomicInteger();
      Semaphore release = new Semaphore(0);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      // each connect is held at the server until the test lets one go
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), slowConnect(inFlight, peak, total, () -> acquire(release)));
      CompletableFuture<List<String>> listed = listInBackground(h);
      try {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(total.get()).as("connects started").isGreaterThanOrEqualTo(16));
        // the window holds: with all 16 held, no 17th starts
        await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(3)).untilAsserted(() ->
            assertThat(total.get()).as("connects started while 16 are held").isEqualTo(16));
        // one slot freed starts exactly one more connect (a sliding window, not batches of 16)
        release.release();
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(total.get()).as("connects after one release").isEqualTo(17));
        await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
          assertThat(total.get()).as("connects after one release").isEqualTo(17);
          assertThat(inFlight.get()).as("connects in flight after one release").isEqualTo(16);
        });
        release.release(1_000);
        // once nothing is held the rest is quick: 23 connects in two waves of loopback calls
        assertThat(listed.get(30, TimeUnit.SECONDS)).containsExactlyElementsOf(ids);
        assertThat(peak.get()).isEqualTo(16);
        assertThat(total.get()).isEqualTo(40);
      } finally {
        release.release(1_000);
      }
    }
  }

  @Test
  @DisplayName("case 31: connects really overlap: all three are in flight before any finishes, and order is kept whatever order they end in")
  void overlap(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = List.of("rowa0000000000000000", "rowb0000000000000000", "rowc0000000000000000");
      AtomicInteger inFlight = new AtomicInteger();
      AtomicInteger finished = new AtomicInteger();
      Map<String, CountDownLatch> release = new java.util.concurrent.ConcurrentHashMap<>();
      ids.forEach(id -> release.put(id, new CountDownLatch(1)));
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) -> {
        String id = req.path().split("/")[2];
        inFlight.incrementAndGet();
        awaitLatch(release.get(id));
        finished.incrementAndGet();
        return FaultServer.json(200, sandbox(id)).answer(req, resp, cb);
      });
      CompletableFuture<List<String>> listed = listInBackground(h);
      try {
        // a client that waited for one connect before the next would never have all three held
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(inFlight.get()).as("connects in flight").isEqualTo(3));
        assertThat(finished.get()).isZero();
        // they end last to first, and the result still follows the listing
        for (String id : ids.reversed()) {
          int before = finished.get();
          release.get(id).countDown();
          await().atMost(Duration.ofSeconds(5)).until(() -> finished.get() == before + 1);
        }
        assertThat(listed.get(5, TimeUnit.SECONDS)).containsExactlyElementsOf(ids);
      } finally {
        release.values().forEach(CountDownLatch::countDown);
      }
    }
  }

  @Test
  @DisplayName("case 32, case 34: a connect that fails with the window full fails the listing, and no new connect starts after it (exactly 16 in all)")
  void failFast(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(40);
      AtomicInteger total = new AtomicInteger();
      AtomicInteger inFlight = new AtomicInteger();
      java.util.concurrent.atomic.AtomicBoolean fullWindow = new java.util.concurrent.atomic.AtomicBoolean();
      CountDownLatch failed = new CountDownLatch(1);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) -> {
        total.incrementAndGet();
        inFlight.incrementAndGet();
        try {
          if (req.path().contains(ids.get(0))) {
            // the failure comes once the whole window is in flight, so that "at most 16" is "exactly 16"
            // and a client with a smaller window is seen (this one never sees 16, and fails the check)
            fullWindow.set(waitFor(() -> inFlight.get() >= 16, Duration.ofSeconds(25)));
            boolean answered = FaultServer.json(503, "{\"code\":503,\"message\":\"connect failed\"}").answer(req, resp, cb);
            failed.countDown();
            return answered;
          }
          // every success comes well after the failure, so no slot frees before the client has seen
          // it: a connect counted past 16 was started after the failure (on a loaded machine the
          // failing request itself can be slow, and a fixed delay alone did not order them)
          awaitLatch(failed);
          pause(1_000);
        } finally {
          inFlight.decrementAndGet();
        }
        return FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb);
      });
      long start = System.nanoTime();
      assertThatThrownBy(() -> h.provider.list())
          .isInstanceOfSatisfying(io.sandboxes.SandboxApiException.class, e -> assertThat(e.statusCode()).isEqualTo(503))
          .hasMessageContaining("connect failed");
      assertThat(fullWindow).as("16 connects were in flight when the first failed").isTrue();
      assertThat(total.get()).as("connects started in all").isEqualTo(16);
      // the in-flight calls are let finish (about 1 s after the failure), never the 25 s wait above
      // (a loaded machine has taken 8 s for the rest)
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    }
  }

  @Test
  @DisplayName("case 33: a sandbox gone since the listing is left out, the rest still come back")
  void goneSinceListing(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(3);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) -> req.path().contains(ids.get(1))
          ? FaultServer.json(404, "{\"code\":404,\"message\":\"gone\"}").answer(req, resp, cb)
          : FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      assertThat(h.provider.list().stream().map(Sandbox::id).toList()).containsExactly(ids.get(0), ids.get(2));
    }
  }

  @Test
  @DisplayName("issue 13 item 9: a record without a daemon token is connected asking for no more than the time it has left")
  void recordWithoutToken(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String id = "rowt0000000000000000";
      String endAt = java.time.Instant.now().plusMillis(120_900).toString();
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(List.of(id))));
      h.api.on(FaultServer.route("GET", "/sandboxes/" + id), FaultServer.json(200, row(id, "running")
          .replace("2026-08-15T11:00:00Z", endAt)));
      h.api.on(FaultServer.route("POST", "/v2/sandboxes/" + id + "/connect"), FaultServer.json(200, sandbox(id)));
      assertThat(h.provider.list()).extracting(Sandbox::id).containsExactly(id);
      List<FaultServer.Recorded> connects = h.api.requests("POST", "/v2/sandboxes/" + id + "/connect");
      assertThat(connects).hasSize(1);
      long asked = io.sandboxes.e2b.internal.Json.parse(connects.get(0).body()).path("timeout").asLong();
      // never more than the 120.9 s left in whole seconds (rounding up would ask 121 and move the
      // deadline); 60 s of slack for a loaded machine, 0.9 s for latency or the wall clock stepping
      assertThat(asked).isBetween(60L, 120L);
    }
  }

  @Test
  @DisplayName("case 35: an empty listing is [], with no connects or record reads; every volume is unattached; no template is in use")
  void emptyListing(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String name = "case35-" + System.nanoTime() % 1_000_000;
      h.provider.createVolume(name);
      Sandbox s = h.provider.create(SandboxConfig.forProject("p").withVolume(name, "/data"));
      try {
        h.provider.commitTemplate(io.sandboxes.TemplateCommit.of(s.id(), name));
        h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "[]"));
        h.api.clearRequests();
        assertThat(h.provider.list()).isEmpty();
        assertThat(h.api.requests("POST", "/v2/sandboxes/")).isEmpty();
        assertThat(h.api.requests("GET", "/sandboxes/")).isEmpty();
        assertThat(h.provider.listVolumes(VolumeQuery.prefixed(name))).singleElement()
            .satisfies(v -> assertThat(v.attached()).isFalse());
        assertThat(h.provider.listTemplates(name)).singleElement().satisfies(t -> assertThat(t.inUse()).isFalse());
        assertThat(h.provider.getTemplate(name).orElseThrow().inUse()).isFalse();
      } finally {
        h.api.clearFaults();
        s.close();
        h.provider.removeTemplate(name);
        h.provider.removeVolume(name);
      }
    }
  }

  @Test
  @DisplayName("case 36, case 37, case 38: a failed listing, one of an unknown shape, and a null one all throw, from list and listTemplates alike")
  void unreadableListings(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), (req, resp, cb) -> {
        resp.setStatus(502);
        resp.write(true, java.nio.ByteBuffer.wrap("connect ECONNRESET".getBytes(StandardCharsets.UTF_8)), cb);
        return true;
      });
      assertThatThrownBy(() -> h.provider.list()).hasMessageContaining("ECONNRESET");
      assertThatThrownBy(() -> h.provider.listTemplates(null)).hasMessageContaining("ECONNRESET");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "{\"items\":[" + row("sbx-1", "running") + "]}"));
      assertThatThrownBy(() -> h.provider.list()).hasMessageContaining("shape this client cannot read").hasMessageContaining("items");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, "null"));
      assertThatThrownBy(() -> h.provider.list()).hasMessageContaining("shape this client cannot read");
      assertThatThrownBy(() -> h.provider.listVolumes(VolumeQuery.all())).hasMessageContaining("shape this client cannot read");
    }
  }

  @Test
  @DisplayName("case 39, case 40: every page of the listing is read and flattened in order")
  void pages(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(4);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), (req, resp, cb) -> {
        boolean second = req.query().contains("nextToken=page2");
        if (!second) {
          resp.getHeaders().put("X-Next-Token", "page2");
        }
        return FaultServer.json(200, listing(second ? ids.subList(2, 4) : ids.subList(0, 2))).answer(req, resp, cb);
      });
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) ->
          FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      assertThat(h.provider.list().stream().map(Sandbox::id).toList()).containsExactlyElementsOf(ids);
      assertThat(h.api.requests("GET", "/v2/sandboxes")).hasSize(2);
    }
  }

  @Test
  @DisplayName("case 41: rows without a sandbox id are dropped; the others keep id, state, template, name and volume mounts")
  void rowNormalisation(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String withMount = row("rowm0000000000000000", "running").replace("\"metadata\":{}",
          "\"metadata\":{},\"alias\":\"node-app\",\"volumeMounts\":[{\"name\":\"v1\",\"path\":\"/data\"}]");
      String paused = row("rowp0000000000000000", "paused").replace("\"templateID\":\"base\"", "\"templateID\":\"tpl-7\"");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200,
          "[" + withMount + ",{\"templateID\":\"base\",\"state\":\"running\"}," + paused + "]"));
      h.api.on(FaultServer.route("GET", "/sandboxes/row[^/]*"), (req, resp, cb) ->
          FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      List<io.sandboxes.SandboxInfo> rows = h.provider.api().listAll(io.sandboxes.e2b.SandboxQuery.all());
      assertThat(rows).extracting(io.sandboxes.SandboxInfo::id).containsExactly("rowm0000000000000000", "rowp0000000000000000");
      assertThat(rows.get(0)).satisfies(r -> {
        assertThat(r.state()).isEqualTo(io.sandboxes.SandboxState.RUNNING);
        assertThat(r.templateId()).isEqualTo("base");
        assertThat(r.alias()).isEqualTo("node-app");
        assertThat(r.volumeMounts()).containsExactly(new io.sandboxes.VolumeMount("v1", "/data"));
      });
      assertThat(rows.get(1)).satisfies(r -> {
        assertThat(r.state()).isEqualTo(io.sandboxes.SandboxState.PAUSED);
        assertThat(r.templateId()).isEqualTo("tpl-7");
        assertThat(r.alias()).isNull();
        assertThat(r.volumeMounts()).isEmpty();
      });
      // list() keeps the running one only: it reads that one's record, and connects to nothing
      h.api.clearRequests();
      assertThat(h.provider.list()).extracting(Sandbox::id).containsExactly("rowm0000000000000000");
      assertThat(h.api.requests("GET", "/sandboxes/")).extracting(FaultServer.Recorded::path)
          .containsExactly("/sandboxes/rowm0000000000000000");
      assertThat(h.api.requests("POST", "/v2/sandboxes/")).isEmpty();
    }
  }

  @Test
  @DisplayName("case 43: the lookups behind volumes and templates count paused sandboxes too, without connecting to any")
  void lookupsIncludePaused(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String vol = "case43-" + System.nanoTime() % 1_000_000;
      h.provider.createVolume(vol);
      Sandbox s = h.provider.create(SandboxConfig.forProject("p").withVolume(vol, "/data"));
      try {
        s.hibernate();
        h.api.clearRequests();
        assertThat(h.provider.listVolumes(VolumeQuery.prefixed(vol))).singleElement()
            .satisfies(v -> assertThat(v.attached()).isTrue());
        assertThat(h.api.requests("POST", "/sandboxes/")).isEmpty();
        assertThat(h.api.requests("POST", "/v2/sandboxes/")).isEmpty();
      } finally {
        s.close();
        h.provider.removeVolume(vol);
      }
    }
  }

  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void acquire(Semaphore permits) {
    try {
      permits.tryAcquire(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Polls {@code condition} until it holds or {@code bound} passes; inside a fault, where the test thread cannot wait. */
  static boolean waitFor(java.util.function.BooleanSupplier condition, Duration bound) {
    try {
      await().atMost(bound).pollInterval(Duration.ofMillis(10)).until(condition::getAsBoolean);
      return true;
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      return false;
    }
  }

  static void awaitLatch(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

}
