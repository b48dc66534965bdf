package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.SandboxInfo;
import io.sandboxes.SandboxNotFoundException;
import io.sandboxes.SandboxSpec;
import io.sandboxes.SandboxState;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.SandboxMetrics;
import io.sandboxes.e2b.SandboxPage;
import io.sandboxes.e2b.SandboxQuery;
import io.sandboxes.e2b.SnapshotInfo;
import io.sandboxes.e2b.TemplateAlias;
import io.sandboxes.e2b.internal.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 13's behaviours through the Java client, against the real local server: listing order
 * and filters with paging, template alias lookup, the metrics range, and pre-signed file URLs.
 */
@ExtendWith(SharedServer.class)
class FidelityClientTest {

  private static List<String> ids(List<SandboxInfo> rows) {
    return rows.stream().map(SandboxInfo::id).toList();
  }

  /** Every page, read one {@link E2BApi#list} at a time, so the token is carried by hand. */
  private static List<String> byPages(E2BApi e2b, SandboxQuery query) {
    List<String> out = new ArrayList<>();
    SandboxQuery q = query;
    while (true) {
      SandboxPage page = e2b.list(q);
      assertThat(page.items().size()).isLessThanOrEqualTo(q.limit());
      out.addAll(ids(page.items()));
      if (!page.hasNext()) {
        return out;
      }
      q = q.withNextToken(page.nextTokenValue());
    }
  }

  @Test
  @DisplayName("listing through the client: order over the whole result, paged by hand and by listAll; startedAfter and template narrow it")
  void listingOrderAndFilters(E2BApi e2b) {
    String tag = "fidc-" + Long.toHexString(System.nanoTime());
    SandboxSpec spec = SandboxSpec.defaults().withMetadata(Map.of("fidc", tag)).withTimeout(Duration.ofMinutes(2));
    try (LiveSandbox first = e2b.create(spec)) {
      SnapshotInfo snap = first.snapshot(tag);
      try (LiveSandbox second = e2b.create(spec); LiveSandbox third = e2b.create(spec.withTemplate(snap.snapshotId()))) {
        SandboxQuery mine = SandboxQuery.byMetadata("fidc", tag);
        List<String> newestFirst = List.of(third.id(), second.id(), first.id());
        List<String> oldestFirst = List.of(first.id(), second.id(), third.id());

        assertThat(ids(e2b.listAll(mine))).containsExactlyElementsOf(newestFirst);
        assertThat(ids(e2b.listAll(mine.withOrder(SandboxQuery.Order.DESC).withLimit(2)))).containsExactlyElementsOf(newestFirst);
        assertThat(ids(e2b.listAll(mine.withOrder(SandboxQuery.Order.ASC)))).containsExactlyElementsOf(oldestFirst);
        assertThat(byPages(e2b, mine.withOrder(SandboxQuery.Order.ASC).withLimit(1))).containsExactlyElementsOf(oldestFirst);
        assertThat(byPages(e2b, mine.withLimit(1))).containsExactlyElementsOf(newestFirst);

        Instant secondStarted = e2b.info(second.id()).startedAt();
        assertThat(ids(e2b.listAll(mine.withOrder(SandboxQuery.Order.ASC).withStartedAfter(secondStarted))))
            .containsExactly(second.id(), third.id());
        assertThat(e2b.listAll(mine.withStartedAfter(Instant.now().plusSeconds(60)))).isEmpty();

        assertThat(ids(e2b.listAll(mine.withTemplate(tag)))).containsExactly(third.id());
        assertThat(ids(e2b.listAll(mine.withTemplate(snap.snapshotId())))).containsExactly(third.id());
        assertThat(ids(e2b.listAll(mine.withTemplate("base").withOrder(SandboxQuery.Order.ASC).withLimit(1))))
            .containsExactly(first.id(), second.id());
        assertThat(ids(e2b.listAll(mine.withTemplate("base").withStartedAfter(secondStarted).withStates(java.util.Set.of(SandboxState.RUNNING)))))
            .containsExactly(second.id());

        // a token handed out for one order is refused in the other, not silently restarted
        SandboxPage firstDesc = e2b.list(mine.withLimit(1));
        assertThat(firstDesc.hasNext()).isTrue();
        assertThatThrownBy(() -> e2b.list(mine.withLimit(1).withOrder(SandboxQuery.Order.ASC).withNextToken(firstDesc.nextTokenValue())))
            .isInstanceOf(io.sandboxes.SandboxApiException.class).hasMessageContaining("other order");
      } finally {
        first.kill();
        e2b.deleteTemplate(snap.snapshotId());
      }
    }
  }

  @Test
  @DisplayName("alias lookup through the client: base is public, a snapshot by name and id is the team's, an unknown one is false/empty")
  void aliasLookup(E2BApi e2b) {
    assertThat(e2b.templateExists("base")).isTrue();
    assertThat(e2b.templateAlias("base")).contains(new TemplateAlias("base", true));
    assertThat(e2b.templateExists("no-such-template-" + Long.toHexString(System.nanoTime()))).isFalse();
    assertThat(e2b.templateAlias("no-such-template-here")).isEmpty();
    String name = "fidc-alias-" + Long.toHexString(System.nanoTime());
    try (LiveSandbox s = e2b.create()) {
      SnapshotInfo snap = s.snapshot(name);
      try {
        assertThat(e2b.templateExists(name)).isTrue();
        assertThat(e2b.templateAlias(name)).contains(new TemplateAlias(name + ":default", false));
        assertThat(e2b.templateAlias(snap.snapshotId())).contains(new TemplateAlias(name + ":default", false));
      } finally {
        e2b.deleteTemplate(snap.snapshotId());
      }
      assertThat(e2b.templateExists(name)).isFalse();
    }
  }

  @Test
  @DisplayName("metrics through the client: the range narrows the history, a range before the sandbox is empty, start after end is refused")
  void metricsRange(E2BApi e2b) {
    String id;
    try (LiveSandbox s = e2b.create()) {
      id = s.id();
      Instant created = e2b.info(s.id()).startedAt();
      assertThat(s.metrics(created.minusSeconds(3600), created.minusSeconds(3000))).isEmpty();
      List<SandboxMetrics> all = await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofSeconds(1))
          .until(s::metrics, l -> l.size() >= 3);
      assertThat(all).extracting(SandboxMetrics::timestamp).isSorted();
      for (SandboxMetrics m : all) {
        assertThat(m.cpuCount()).isEqualTo(2);
        assertThat(m.memTotal()).isEqualTo(1024L * 1024 * 1024);
        assertThat(m.memUsed()).isPositive().isLessThan(m.memTotal());
        assertThat(m.diskTotal()).isPositive();
        assertThat(m.cpuUsedPct()).isBetween(0.0, 100.0);
      }
      Instant firstAt = all.get(0).timestamp();
      assertThat(s.metrics(firstAt, firstAt)).extracting(SandboxMetrics::timestamp).containsOnly(firstAt).isNotEmpty();
      assertThat(e2b.metrics(s.id(), firstAt.plusSeconds(1), null)).isNotEmpty().allMatch(m -> m.timestamp().isAfter(firstAt));
      assertThatThrownBy(() -> s.metrics(Instant.now(), Instant.now().minusSeconds(10)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("start").hasMessageContaining("is after end");
      s.kill();
    }
    assertThatThrownBy(() -> e2b.metrics(id, null, null)).isInstanceOf(SandboxNotFoundException.class);
  }

  private static HttpResponse<String> plain(URI uri, String method, HttpRequest.BodyPublisher body, String contentType) throws Exception {
    try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
      HttpRequest.Builder b = HttpRequest.newBuilder(uri).method(method, body);
      if (contentType != null) {
        b.header("Content-Type", contentType);
      }
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  private static HttpResponse<String> upload(URI uri, String filename, String content) throws Exception {
    String boundary = "fidcboundary";
    String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename + "\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\n" + content + "\r\n--" + boundary + "--\r\n";
    return plain(uri, "POST", HttpRequest.BodyPublishers.ofString(multipart), "multipart/form-data; boundary=" + boundary);
  }

  private static String message(HttpResponse<String> r) throws Exception {
    return Json.parse(r.body().getBytes(StandardCharsets.UTF_8)).path("message").asText();
  }

  @Test
  @DisplayName("signed URLs through the client: download and upload with a bare request, as a user, with an expiry that then answers 401")
  void signedUrls(E2BApi e2b) throws Exception {
    try (LiveSandbox s = e2b.create()) {
      s.writeBytes("/home/user/signed.txt", "signed".getBytes(StandardCharsets.UTF_8));
      URI down = s.downloadUrl("/home/user/signed.txt");
      assertThat(down.getQuery()).contains("signature=v1_").doesNotContain("signature_expiration");
      HttpResponse<String> got = plain(down, "GET", HttpRequest.BodyPublishers.noBody(), null);
      assertThat(got.statusCode()).isEqualTo(200);
      assertThat(got.body()).isEqualTo("signed");

      // a signature names its user: root's file is read as root, and not as user
      s.exec("echo -n secret > /root/only-root.txt && chmod 600 /root/only-root.txt", io.sandboxes.ExecOptions.defaults().withUser("root"));
      assertThat(plain(s.downloadUrl("/root/only-root.txt", "root", Duration.ofMinutes(1)), "GET",
          HttpRequest.BodyPublishers.noBody(), null).body()).isEqualTo("secret");
      assertThat(plain(s.downloadUrl("/root/only-root.txt", "user", null), "GET", HttpRequest.BodyPublishers.noBody(), null)
          .statusCode()).isNotEqualTo(200);
      // a signature covers its path: the same URL with another path is refused
      URI tampered = URI.create(down.toString().replace("signed.txt", "other.txt"));
      assertThat(plain(tampered, "GET", HttpRequest.BodyPublishers.noBody(), null).statusCode()).isNotEqualTo(200);

      HttpResponse<String> up = upload(s.uploadUrl("/home/user/up.txt", null, Duration.ofMinutes(1)), "up.txt", "uploaded");
      assertThat(up.statusCode()).as(up.body()).isEqualTo(200);
      assertThat(new String(s.readBytes("/home/user/up.txt"), StandardCharsets.UTF_8)).isEqualTo("uploaded");
      // no path: each part's file name is its path, and the signature covers the empty path
      assertThat(upload(s.uploadUrl(null), "/home/user/named.txt", "by name").statusCode()).isEqualTo(200);
      assertThat(new String(s.readBytes("/home/user/named.txt"), StandardCharsets.UTF_8)).isEqualTo("by name");

      URI shortDown = s.downloadUrl("/home/user/signed.txt", null, Duration.ofSeconds(1));
      URI shortUp = s.uploadUrl("/home/user/late.txt", null, Duration.ofSeconds(1));
      assertThat(shortDown.getQuery()).contains("signature_expiration=");
      HttpResponse<String> expired = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(250))
          .until(() -> plain(shortDown, "GET", HttpRequest.BodyPublishers.noBody(), null), r -> r.statusCode() != 200);
      assertThat(expired.statusCode()).isEqualTo(401);
      assertThat(message(expired)).isEqualTo("signature is already expired");
      HttpResponse<String> lateUp = upload(shortUp, "late.txt", "late");
      assertThat(lateUp.statusCode()).isEqualTo(401);
      assertThat(message(lateUp)).isEqualTo("signature is already expired");
      assertThat(s.exec("test -e /home/user/late.txt").exitCode()).isEqualTo(1);

      assertThatThrownBy(() -> s.downloadUrl("/x", null, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
  }
}
