package io.sandboxes.local.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.TemplateDescriptor;
import io.sandboxes.VolumeDescriptor;
import io.sandboxes.VolumeQuery;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
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

  /** Answers a connect for a scripted id after {@code work}, counting connects in flight. */
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

  @Test
  @DisplayName("case 30: 40 running rows come back in listing order with more than 1 and at most 16 connects in flight")
  void window(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(40);
      AtomicInteger inFlight = new AtomicInteger();
      AtomicInteger peak = new AtomicInteger();
      AtomicInteger total = new AtomicInteger();
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("POST", "/sandboxes/row.*/connect"), slowConnect(inFlight, peak, total, () -> pause(150)));
      List<String> listed = h.provider.list().stream().map(Sandbox::id).toList();
      assertThat(listed).containsExactlyElementsOf(ids);
      assertThat(peak.get()).isGreaterThan(1).isLessThanOrEqualTo(16);
      assertThat(total.get()).isEqualTo(40);
    }
  }

  @Test
  @DisplayName("case 31: connects really overlap: all three are in flight before any finishes, and order is kept")
  void overlap(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = List.of("rowa0000000000000000", "rowb0000000000000000", "rowc0000000000000000");
      CountDownLatch allStarted = new CountDownLatch(3);
      CountDownLatch release = new CountDownLatch(1);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("POST", "/sandboxes/row.*/connect"), slowConnect(new AtomicInteger(), new AtomicInteger(),
          new AtomicInteger(), () -> {
            allStarted.countDown();
            await(release);
          }));
      Thread releaser = Thread.ofVirtual().start(() -> {
        try {
          if (allStarted.await(5, TimeUnit.SECONDS)) {
            release.countDown();
          }
        } catch (InterruptedException ignored) {
          // the test fails below without the release
        }
      });
      List<String> listed = h.provider.list().stream().map(Sandbox::id).toList();
      releaser.join();
      assertThat(allStarted.getCount()).isZero();
      assertThat(listed).containsExactlyElementsOf(ids);
    }
  }

  @Test
  @DisplayName("case 32, case 34: a failed connect fails the listing, and no new connect starts after it (at most 16 in all)")
  void failFast(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(40);
      AtomicInteger total = new AtomicInteger();
      CountDownLatch failed = new CountDownLatch(1);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("POST", "/sandboxes/row.*/connect"), (req, resp, cb) -> {
        total.incrementAndGet();
        if (req.path().contains(ids.get(0))) {
          boolean answered = FaultServer.json(503, "{\"code\":503,\"message\":\"connect failed\"}").answer(req, resp, cb);
          failed.countDown();
          return answered;
        }
        // every success comes well after the failure, so no slot frees before the client has seen
        // it: a connect counted past 16 was started after the failure (on a loaded machine the
        // failing request itself can be slow, and a fixed delay alone did not order them)
        await(failed);
        pause(1_000);
        return FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb);
      });
      assertThatThrownBy(() -> h.provider.list()).isInstanceOf(SandboxException.class).hasMessageContaining("connect failed");
      assertThat(total.get()).isLessThanOrEqualTo(16);
    }
  }

  @Test
  @DisplayName("case 33: a sandbox gone since the listing is left out, the rest still come back")
  void goneSinceListing(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      List<String> ids = ids(3);
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200, listing(ids)));
      h.api.on(FaultServer.route("POST", "/sandboxes/row.*/connect"), (req, resp, cb) -> req.path().contains(ids.get(1))
          ? FaultServer.json(404, "{\"code\":404,\"message\":\"gone\"}").answer(req, resp, cb)
          : FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      assertThat(h.provider.list().stream().map(Sandbox::id).toList()).containsExactly(ids.get(0), ids.get(2));
    }
  }

  @Test
  @DisplayName("case 35: an empty listing is [], with no connects; every volume is unattached; no template is in use")
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
        assertThat(h.api.requests("POST", "/sandboxes/")).isEmpty();
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
      h.api.on(FaultServer.route("POST", "/sandboxes/row.*/connect"), (req, resp, cb) ->
          FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      assertThat(h.provider.list().stream().map(Sandbox::id).toList()).containsExactlyElementsOf(ids);
      assertThat(h.api.requests("GET", "/v2/sandboxes")).hasSize(2);
    }
  }

  @Test
  @DisplayName("case 41: rows without a sandbox id are dropped; the others keep id, state, template and volume mounts")
  void rowNormalisation(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      String withMount = row("rowm0000000000000000", "running").replace("\"metadata\":{}",
          "\"metadata\":{},\"volumeMounts\":[{\"name\":\"v1\",\"path\":\"/data\"}]");
      h.api.on(FaultServer.route("GET", "/v2/sandboxes"), FaultServer.json(200,
          "[" + withMount + ",{\"templateID\":\"base\",\"state\":\"running\"}]"));
      h.api.on(FaultServer.route("POST", "/sandboxes/row.*/connect"), (req, resp, cb) ->
          FaultServer.json(200, sandbox(req.path().split("/")[2])).answer(req, resp, cb));
      assertThat(h.provider.list()).extracting(Sandbox::id).containsExactly("rowm0000000000000000");
      assertThat(h.provider.listVolumes(VolumeQuery.prefixed("no-such-prefix-"))).isEmpty();
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

  static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

}
