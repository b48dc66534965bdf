package io.sandboxes.local.internal.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.Json;
import io.sandboxes.local.LocalServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The check a server makes of its runtime against {@code docker info}, before it makes anything. */
class SandboxRuntimeTest {

  private static JsonNode runtimes(String json) throws Exception {
    return Json.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  private static String gvisor(String... args) {
    return "{\"runc\":{\"path\":\"runc\"},\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":[\""
        + String.join("\",\"", args) + "\"]}}";
  }

  @Test
  @DisplayName("gVisor registered as docker-up.sh does, with either host-uds that lets the daemon connect out, is gVisor; runc by name is runc")
  void accepted() throws Exception {
    assertThat(SandboxRuntime.of("runsc", runtimes(gvisor("--host-uds=open", "--network=host"))))
        .isEqualTo(new SandboxRuntime("runsc", SandboxRuntime.Kind.GVISOR));
    assertThat(SandboxRuntime.of("runsc", runtimes(gvisor("--network", "host", "-host-uds=all", "--debug")))).extracting(SandboxRuntime::gvisor)
        .isEqualTo(true);
    // gVisor under another name is still gVisor
    assertThat(SandboxRuntime.of("gvisor", runtimes("{\"gvisor\":{\"path\":\"/opt/bin/runsc\",\"runtimeArgs\":[\"--host-uds=open\",\"--network=host\"]}}"))
        .gvisor()).isTrue();
    assertThat(SandboxRuntime.of("runc", runtimes(gvisor("--host-uds=open", "--network=host"))))
        .isEqualTo(new SandboxRuntime("runc", SandboxRuntime.Kind.RUNC));
  }

  @Test
  @DisplayName("a runtime Docker does not list is refused naming what it knows, and for runsc how to register it")
  void unknownRefused() throws Exception {
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes("{\"runc\":{\"path\":\"runc\"}}")))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("Docker does not know the runtime 'runsc' (it knows: runc)")
        .hasMessageContaining("scripts/docker-up.sh --runsc");
  }

  @Test
  @DisplayName("gVisor without --network=host, without host-uds the daemon can use, or with raw sockets, is refused naming each argument")
  void gvisorArgumentsChecked() throws Exception {
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes(gvisor("--host-uds=open"))))
        .isInstanceOf(SandboxException.class).hasMessageContaining("--network=host (it has none)");
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes(gvisor("--host-uds=open", "--network=sandbox"))))
        .hasMessageContaining("--network=host (it has --network=sandbox)").hasMessageContaining("past that firewall");
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes(gvisor("--network=host"))))
        .hasMessageContaining("--host-uds=open (it has none)");
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes(gvisor("--network=host", "--host-uds=create"))))
        .hasMessageContaining("--host-uds=open (it has --host-uds=create)");
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes(gvisor("--network=host", "--host-uds=open", "--net-raw"))))
        .hasMessageContaining("no --net-raw");
    // the last one given wins, as runsc reads its flags
    assertThatThrownBy(() -> SandboxRuntime.of("runsc", runtimes(gvisor("--network=host", "--host-uds=open", "--network=sandbox"))))
        .hasMessageContaining("it has --network=sandbox");
  }

  @Test
  @DisplayName("a runtime that is neither runc nor gVisor is refused: nothing else has been made to work here")
  void otherRuntimesRefused() throws Exception {
    assertThatThrownBy(() -> SandboxRuntime.of("crun", runtimes("{\"crun\":{\"path\":\"/usr/bin/crun\"}}")))
        .isInstanceOf(SandboxException.class).hasMessageContaining("neither runc nor gVisor's runsc");
    assertThatThrownBy(() -> SandboxRuntime.of("runc", runtimes("{\"runc\":{\"path\":\"/usr/local/bin/kata-runtime\"}}")))
        .hasMessageContaining("neither runc nor gVisor's runsc");
  }

  @Test
  @DisplayName("flags read as runsc reads them")
  void flags() {
    assertThat(SandboxRuntime.flag(List.of("--network=host"), "network")).isEqualTo("host");
    assertThat(SandboxRuntime.flag(List.of("-network", "host"), "network")).isEqualTo("host");
    assertThat(SandboxRuntime.flag(List.of("--net-raw", "--network=host"), "net-raw")).isEqualTo("true");
    assertThat(SandboxRuntime.flag(List.of("--net-raw=false"), "net-raw")).isEqualTo("false");
    assertThat(SandboxRuntime.flag(List.of("--networks=x"), "network")).isNull();
  }

  @Test
  @DisplayName("a server asked for a runtime the real Docker does not know refuses to start, saying so, and makes no container")
  void serverRefusesUnknownRuntime() {
    String serverId = "runtime-refused-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    assertThatThrownBy(() -> LocalServer.builder().serverId(serverId).runtime("sandboxes-no-such-runtime").warmPool(0).build().start())
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("Docker does not know the runtime 'sandboxes-no-such-runtime'");
    try (DockerRuntime docker = DockerRuntime.connect()) {
      assertThat(docker.listOurs()).noneMatch(c -> serverId.equals(c.getLabels().get(DockerRuntime.LABEL_SERVER)));
    }
  }
}
