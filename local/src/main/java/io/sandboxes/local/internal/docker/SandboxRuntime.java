package io.sandboxes.local.internal.docker;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandboxes.SandboxException;
import io.sandboxes.e2b.internal.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The OCI runtime a server's sandboxes run on, as Docker knows it: the engine's default (runc),
 * runc by name, or gVisor ({@code runsc}), which puts a user-space kernel between the sandbox and
 * the host's. Checked once, when the server starts, against what {@code docker info} lists: a
 * runtime Docker does not know, one this server has not been made to work with, or gVisor
 * registered with arguments the server's sandboxes cannot work under is refused with what to do.
 *
 * @param name the runtime's name in Docker, or null for the engine's default
 * @param kind what it is
 */
public record SandboxRuntime(@Nullable String name, Kind kind) {

  /** What a runtime is. */
  public enum Kind {
    /** runc, Docker's default: containers share the host's kernel. */
    RUNC,
    /** gVisor's runsc: the sandbox's system calls are served by gVisor's own kernel. */
    GVISOR
  }

  /** The name gVisor is registered under by {@code scripts/docker-up.sh --runsc}. */
  public static final String RUNSC = "runsc";

  /** The engine's default runtime, which is runc unless its operator changed it. */
  public static final SandboxRuntime ENGINE_DEFAULT = new SandboxRuntime(null, Kind.RUNC);

  /** The runtime arguments a gVisor runtime must be registered with, as daemon.json spells them. */
  static final List<String> GVISOR_ARGS = List.of("--host-uds=open", "--network=host");

  /** @return whether sandboxes on this runtime run under gVisor */
  public boolean gvisor() {
    return kind == Kind.GVISOR;
  }

  /** @return the name to log and report: the Docker runtime's, or {@code runc} for the engine's default */
  public String describe() {
    return name == null ? "runc (the engine's default)" : kind == Kind.GVISOR ? name + " (gVisor)" : name;
  }

  /**
   * Asks the engine which runtimes it knows and checks the one {@code docker} was connected for.
   *
   * @param docker the engine, connected with the runtime to check ({@link DockerRuntime#runtime()})
   * @return the runtime, ready to use
   * @throws SandboxException naming the runtime and what to do, when Docker does not list it, when
   *     it is neither runc nor gVisor, or when gVisor lacks an argument the sandboxes need
   */
  public static SandboxRuntime check(DockerRuntime docker) {
    String name = docker.runtime();
    if (name == null) {
      return ENGINE_DEFAULT;
    }
    JsonNode runtimes;
    try {
      byte[] info = docker.getJson("/info", 4 << 20);
      runtimes = info == null ? null : Json.parse(info).path("Runtimes");
    } catch (IOException e) {
      throw new SandboxException("could not ask Docker which runtimes it knows, to check runtime '" + name + "': " + e.getMessage(), e);
    }
    if (runtimes == null || !runtimes.isObject()) {
      throw new SandboxException("Docker's info lists no runtimes, so runtime '" + name + "' cannot be checked");
    }
    return of(name, runtimes);
  }

  /** The check on {@code docker info}'s {@code Runtimes} object. */
  static SandboxRuntime of(String name, JsonNode runtimes) {
    JsonNode entry = runtimes.get(name);
    if (entry == null || !entry.isObject()) {
      List<String> known = new ArrayList<>();
      runtimes.fieldNames().forEachRemaining(known::add);
      String hint = RUNSC.equals(name)
          ? ". Register gVisor with 'bash scripts/docker-up.sh --runsc', or add {\"runtimes\": {\"runsc\": {\"path\": \"/usr/bin/runsc\","
              + " \"runtimeArgs\": [\"--host-uds=open\", \"--network=host\"]}}} to /etc/docker/daemon.json and send dockerd SIGHUP"
          : "";
      throw new SandboxException("Docker does not know the runtime '" + name + "' (it knows: " + String.join(", ", known) + ")" + hint);
    }
    String path = entry.path("path").asText("");
    String program = path.substring(path.lastIndexOf('/') + 1);
    if ("runc".equals(name) && (program.isEmpty() || "runc".equals(program))) {
      return new SandboxRuntime(name, Kind.RUNC);
    }
    if (!"runsc".equals(program)) {
      throw new SandboxException("runtime '" + name + "' runs '" + path + "', which is neither runc nor gVisor's runsc;"
          + " this server's sandboxes run on those two only");
    }
    List<String> args = new ArrayList<>();
    entry.path("runtimeArgs").forEach(a -> args.add(a.asText()));
    List<String> wrong = new ArrayList<>();
    String network = flag(args, "network");
    if (!"host".equals(network)) {
      wrong.add("--network=host (it has " + (network == null ? "none" : "--network=" + network) + "): a sandbox's traffic must"
          + " leave through the network namespace Docker made, where the server's firewall holds it; gVisor's own network"
          + " stack would send it past that firewall, and does not start in Docker's namespace here");
    }
    String uds = flag(args, "host-uds");
    if (!"open".equals(uds) && !"all".equals(uds)) {
      wrong.add("--host-uds=open (it has " + (uds == null ? "none" : "--host-uds=" + uds) + "): the in-sandbox daemon connects"
          + " to the server through a host unix socket mounted into the sandbox");
    }
    String raw = flag(args, "net-raw");
    if (raw != null && !"false".equals(raw)) {
      wrong.add("no --net-raw: it gives root in the sandbox raw sockets, past the egress policy");
    }
    if (!wrong.isEmpty()) {
      throw new SandboxException("Docker runs gVisor as runtime '" + name + "' with arguments " + args + ", but this server's"
          + " sandboxes need " + String.join("; and ", wrong) + ". Register it with runtimeArgs "
          + GVISOR_ARGS + " ('bash scripts/docker-up.sh --runsc' does)");
    }
    return new SandboxRuntime(name, Kind.GVISOR);
  }

  /**
   * A runsc flag's value among runtime arguments ({@code --name=value}, {@code -name=value},
   * {@code --name value}; a bare boolean flag reads {@code true}); the last one given wins, as
   * runsc's flag parser has it.
   */
  static @Nullable String flag(List<String> args, String flag) {
    String found = null;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String bare = a.startsWith("--") ? a.substring(2) : a.startsWith("-") ? a.substring(1) : null;
      if (bare == null) {
        continue;
      }
      if (bare.startsWith(flag + "=")) {
        found = bare.substring(flag.length() + 1);
      } else if (bare.equals(flag)) {
        boolean booleanFlag = "net-raw".equals(flag);
        found = booleanFlag || i + 1 >= args.size() ? "true" : args.get(++i);
      }
    }
    return found;
  }
}
