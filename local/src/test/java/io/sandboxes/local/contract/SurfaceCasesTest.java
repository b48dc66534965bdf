package io.sandboxes.local.contract;

import io.sandboxes.local.CapturedLogs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.sandboxes.Describing;
import io.sandboxes.EgressVerification;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxConfig;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxProvider;
import io.sandboxes.TemplateCommit;
import io.sandboxes.TemplateManagement;
import io.sandboxes.VolumeManagement;
import io.sandboxes.VolumeQuery;
import io.sandboxes.e2b.E2BSandboxProvider;
import io.sandboxes.local.LocalServer;
import io.sandboxes.local.SharedServer;
import io.sandboxes.local.Tokens;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Behaviour contract, sections K (no snapshot API) and N (capability surface, honesty, secrets). */
@ExtendWith(SharedServer.class)
class SurfaceCasesTest {

  @Test
  @DisplayName("case 146: the provider is e2b and has exactly its optional capabilities; nothing else is advertised")
  void providerSurface(LocalServer server) throws Exception {
    try (Harness h = new Harness(server)) {
      SandboxProvider p = h.provider;
      assertThat(p.name()).isEqualTo("e2b");
      for (Class<?> c : List.of(Describing.class, VolumeManagement.class, TemplateManagement.class, EgressVerification.class)) {
        assertThat(p.capability(c)).as(c.getSimpleName()).isPresent();
      }
      Set<String> apiInterfaces = Arrays.stream(E2BSandboxProvider.class.getInterfaces()).map(Class::getSimpleName).collect(Collectors.toSet());
      assertThat(apiInterfaces).containsExactlyInAnyOrder("SandboxProvider", "Describing", "VolumeManagement", "TemplateManagement",
          "EgressVerification");
      Set<String> methods = Arrays.stream(E2BSandboxProvider.class.getMethods()).map(Method::getName).collect(Collectors.toSet());
      assertThat(methods).doesNotContain("find", "capacity", "publishTemplate", "fetchTemplate");
      assertThat(p.capability(Runnable.class)).isEmpty();
    }
  }

  @Test
  @DisplayName("case 147: the handle has spawn, hibernate, resume, exportFiles, importFiles and exact-byte files, and no setResources")
  void handleSurface() {
    Set<String> methods = Arrays.stream(Sandbox.class.getMethods()).map(Method::getName).collect(Collectors.toSet());
    assertThat(methods).contains("spawn", "hibernate", "resume", "exportFiles", "importFiles", "readBytes", "writeBytes", "onFileChange")
        .doesNotContain("setResources");
  }

  @Test
  @DisplayName("case 127, case 148: a server without snapshots, volumes or pause makes each operation throw, never pretend")
  void missingServerFeatures(LocalServer server) throws Exception {
    try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
      String notHere = "{\"code\":501,\"message\":\"not implemented by this server\"}";
      h.api.on(r -> r.path().contains("snapshots") || r.path().startsWith("/templates") || r.path().startsWith("/volumes")
          || r.path().endsWith("/pause"), FaultServer.json(501, notHere));
      List<Runnable> calls = List.of(
          () -> h.provider.commitTemplate(TemplateCommit.of(s.id(), "t1")),
          () -> h.provider.getTemplate("t1"),
          () -> h.provider.listTemplates(null),
          () -> h.provider.removeTemplate("t1"),
          () -> h.provider.createVolume("v1"),
          () -> h.provider.volumeExists("v1"),
          () -> h.provider.removeVolume("v1"),
          () -> h.provider.listVolumes(VolumeQuery.all()),
          s::hibernate);
      for (Runnable call : calls) {
        assertThatThrownBy(call::run).isInstanceOf(SandboxException.class).hasMessageContaining("not implemented by this server");
      }
    }
  }

  @Test
  @DisplayName("case 152: the API key and access tokens never appear in toString, exception messages or logs")
  void secrets(LocalServer server) throws Exception {
    try (CapturedLogs logs = new CapturedLogs()) {
      List<String> texts = new java.util.ArrayList<>();
      String token;
      String id;
      try (Harness h = new Harness(server); Sandbox s = h.provider.create(SandboxConfig.forProject("p"))) {
        id = s.id();
        token = Tokens.envdToken(server, s.id());
        texts.addAll(List.of(h.provider.toString(), s.toString(), h.provider.api().toString()));
        try (E2BSandboxProvider wrong = E2BSandboxProvider.builder().apiUrl(server.apiUrl()).apiKey("e2b_deadbeef00").environment(Map.of()).build()) {
          texts.add(catchThrowable(() -> wrong.create(SandboxConfig.forProject("p"))).toString());
          texts.add(wrong.toString());
        }
        // a wrong envd token, sent to the real daemon endpoint: the server refuses it (and may log that)
        try (E2BSandboxProvider wrongToken = E2BSandboxProvider.builder().apiUrl(h.api.url()).sandboxUrl(h.envd.url())
            .apiKey(server.apiKey()).environment(Map.of()).build()) {
          h.api.on(FaultServer.route("POST", "/v2/sandboxes/" + s.id() + "/connect"), (req, resp, cb) -> FaultServer.json(200,
              "{\"sandboxID\":\"" + s.id() + "\",\"templateID\":\"base\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"envdtok_wrong_0123456789\"}")
              .answer(req, resp, cb));
          texts.add(catchThrowable(() -> wrongToken.api().connect(s.id()).exec("true")).toString());
          h.api.clearFaults();
        }
        h.envd.on(r -> true, FaultServer.json(401, "{\"code\":401,\"message\":\"unauthorized\"}"));
        texts.add(catchThrowable(() -> s.exec("true")).toString());
        texts.add(catchThrowable(() -> s.readFile("/etc/passwd")).toString());
        h.envd.clearFaults();
        texts.add(catchThrowable(() -> h.provider.api().info("nosuchsandbox0000000")).toString());
      }
      assertThat(texts).noneMatch(t -> t.contains(server.apiKey()) || t.contains(token) || t.contains("e2b_deadbeef00")
          || t.contains("envdtok_wrong_0123456789"));
      String logged = logs.text();
      // the capture sees the server's own log lines: the sandbox made above was logged by id
      assertThat(logged).as("captured logs").contains(id);
      for (String secret : List.of(server.apiKey(), token, "e2b_deadbeef00", "envdtok_wrong_0123456789")) {
        assertThat(logged).as("logs").doesNotContain(secret.substring(0, Math.min(12, secret.length())))
            .doesNotContain(secret.substring(Math.max(0, secret.length() - 12)));
      }
    }
  }
}
