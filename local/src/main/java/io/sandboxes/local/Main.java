package io.sandboxes.local;

import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The command line of {@code sandboxes-local}.
 *
 * <pre>
 * sandboxes-local serve [--port 3000] [--envd-port 49983] [--api-key KEY] [--keep-sandboxes] [--internet-by-default] [--runtime runsc]
 * sandboxes-local stop
 * sandboxes-local image build [code-interpreter-v1]
 * </pre>
 *
 * @since 0.1
 */
public final class Main {
  private Main() {}

  /**
   * Runs one command and exits the JVM with its status (0 on success).
   *
   * @param args the command and its options; {@code --help} lists them
   */
  public static void main(String[] args) {
    System.exit(run(List.of(args), System.out, System.err));
  }

  static int run(List<String> args, PrintStream out, PrintStream err) {
    Deque<String> rest = new ArrayDeque<>(args);
    String command = rest.isEmpty() ? "--help" : rest.pop();
    try {
      return switch (command) {
        case "serve" -> serve(rest, out);
        case "image" -> image(rest, out);
        case "status" -> status(rest, out);
        case "forward" -> forward(rest, out);
        case "stop" -> stop(rest, out);
        case "--help", "-h", "help" -> {
          usage(out);
          yield 0;
        }
        default -> {
          err.println("unknown command '" + command + "'");
          usage(err);
          yield 2;
        }
      };
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return 2;
    } catch (RuntimeException e) {
      err.println("error: " + e.getMessage());
      return 1;
    }
  }

  private static void usage(PrintStream out) {
    out.println("""
        usage:
          sandboxes-local serve [--port N] [--envd-port N] [--api-key KEY] [--keep-sandboxes]
                                [--id NAME] [--state-dir DIR] [--host ADDRESS] [--disk-mb N]
                                [--internet-by-default] [--warm-pool N | --warm-pool TEMPLATE=N]... [--warm-pool-max N]
                                [--runtime NAME] [--upstream-proxy URL] [--idle-exit DURATION] [--background]
                                [--extra-ca-certs PEM_FILE]
              serve E2B's API on 127.0.0.1:N (default 3000) and envd on 127.0.0.1:N (default 49983);
              --keep-sandboxes leaves them running at shutdown, and a server started again with
              the same --id (default "standalone") takes them back; --host binds another
              address than 127.0.0.1, which exposes every sandbox to that network; --disk-mb
              limits each sandbox's writable layer (default 10240);
              --internet-by-default applies E2B's default egress to a create that does not say
              allow_internet_access (open, less denyOut) instead of this runtime's (nothing);
              --warm-pool keeps N pre-started sandboxes of base (default 2, 0 off) or of
              TEMPLATE ready, so a create without volume mounts takes one in milliseconds;
              --warm-pool-max lets each pool grow to N with demand (0 fixed size; default: what
              a 64th of the engine's memory holds at 8 MiB each, 16 to 64),
              back to its --warm-pool size after a minute without creates;
              --runtime runsc runs sandboxes under gVisor, a user-space kernel between them and
              the host's (register it with Docker first: scripts/docker-up.sh --runsc);
              --extra-ca-certs adds the PEM file's CA certificates (a corporate proxy's, say) to
              every sandbox's trust store and to what the egress gateway trusts upstream
              (default: $SANDBOXES_EXTRA_CA_CERTS)
              --upstream-proxy sends what sandboxes may reach through a proxy, e.g. a corporate
              one: socks5h://, socks5:// or http://[user:password@]host:port (a sandbox's own
              egressProxy goes first; $HTTPS_PROXY is not read: pass it here if you mean it)
          sandboxes-local image build [code-interpreter-v1]
              build the base template image (and the code interpreter's) if missing, showing progress
          sandboxes-local image list
              list the base image and the snapshot templates
          sandboxes-local status
              list every sandbox container of the local runtime, whichever server made it,
              and every server's warm pool
          sandboxes-local forward SANDBOX_ID PORT [--api-url URL] [--api-key KEY]
              ask a running server (default $E2B_API_URL, else http://127.0.0.1:3000, with
              $E2B_API_KEY) to make PORT inside the sandbox reachable here, and print its URL""");
  }

  private static int serve(Deque<String> opts, PrintStream out) {
    java.time.Duration idleExit = null;
    boolean background = false;
    Deque<String> serverOpts = new ArrayDeque<>();
    while (!opts.isEmpty()) {
      String o = opts.pop();
      switch (o) {
        case "--idle-exit" -> idleExit = duration(o, arg(opts, o));
        case "--background" -> background = true;
        default -> serverOpts.add(o);
      }
    }
    if (background) {
      ignoreTerminalSignals();
    }
    LocalServer.Builder builder = serveOptions(serverOpts, out);
    LocalServer server = builder.build().start();
    java.nio.file.Path root = ServerParts.defaultStateRoot();
    boolean announced = announce(server, root, out);
    CountDownLatch stopped = new CountDownLatch(1);
    Runnable stop = () -> {
      if (announced) {
        io.sandboxes.local.internal.Announcement.withdraw(root, server.apiUrl());
      }
      server.close();
      stopped.countDown();
    };
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "sandboxes-local-shutdown"));
    if (background) {
      out.println("serving E2B's API at " + server.apiUrl() + " and envd at " + server.sandboxUrl()
          + (announced ? ", announced in " + io.sandboxes.local.internal.Announcement.file(root) : ""));
    } else {
      out.println("export E2B_API_URL=" + server.apiUrl());
      out.println("export E2B_SANDBOX_URL=" + server.sandboxUrl());
      out.println("export E2B_API_KEY=" + server.apiKey());
      // the official SDKs send volume content calls here, authorized by each volume's token
      out.println("export E2B_VOLUME_API_URL=" + server.apiUrl());
    }
    out.flush();
    if (idleExit != null) {
      java.time.Duration quiet = idleExit;
      Thread.ofPlatform().daemon().name("sandboxes-local-idle").start(() -> {
        try {
          while (!stopped.await(Math.min(5_000, Math.max(100, quiet.toMillis() / 4)), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            if (server.idleFor(quiet)) {
              out.println("no sandbox and no call for " + quiet + ": stopping");
              out.flush();
              stop.run();
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  /**
   * Writes {@code server.json} for this server unless it listens beyond loopback or a live
   * server is announced there already.
   *
   * @return whether it did
   */
  private static boolean announce(LocalServer server, java.nio.file.Path root, PrintStream out) {
    if (!io.sandboxes.local.internal.Announcement.isLoopback(server.apiUrl().getHost())) {
      out.println("not announced in " + io.sandboxes.local.internal.Announcement.file(root)
          + ": this server listens beyond loopback, and Sandboxes.local() reuses only a server on loopback");
      return false;
    }
    io.sandboxes.local.internal.Announcement.Read existing = io.sandboxes.local.internal.Announcement.read(root);
    if (existing.server().isPresent() && LocalRuntimeService.probe(existing.server().get()).isPresent()) {
      out.println("not announced: " + io.sandboxes.local.internal.Announcement.file(root) + " names the live server at "
          + existing.server().get().apiUrl() + " (pid " + existing.server().get().pid() + ")");
      return false;
    }
    try {
      io.sandboxes.local.internal.Announcement.write(root, server.apiUrl(), server.sandboxUrl(), server.apiKey(), server.serverId());
      return true;
    } catch (java.io.IOException e) {
      out.println("not announced: " + io.sandboxes.local.internal.Announcement.file(root) + " could not be written: " + e);
      return false;
    }
  }

  /**
   * A server started in the background must not end with the terminal it was started from:
   * Ctrl-C in it, or closing it, signals the whole process group. (Where {@code setsid} exists,
   * the server has a session of its own and sees neither anyway.)
   */
  @SuppressWarnings("sunapi")
  private static void ignoreTerminalSignals() {
    for (String name : new String[] {"INT", "HUP"}) {
      try {
        sun.misc.Signal.handle(new sun.misc.Signal(name), sun.misc.SignalHandler.SIG_IGN);
      } catch (IllegalArgumentException unsupported) {
        // no such signal here
      }
    }
  }

  private static int stop(Deque<String> opts, PrintStream out) {
    if (!opts.isEmpty()) {
      throw new IllegalArgumentException("stop takes no options");
    }
    java.nio.file.Path root = ServerParts.defaultStateRoot();
    io.sandboxes.local.internal.Announcement.Read read = io.sandboxes.local.internal.Announcement.read(root);
    if (read.server().isEmpty()) {
      throw new IllegalStateException(read.ignored().orElse("no server is announced in " + io.sandboxes.local.internal.Announcement.file(root)));
    }
    io.sandboxes.local.internal.Announcement.Server s = read.server().get();
    // the process is ours and alive; that it is the server (and not a process that took its pid) is asked of the server itself
    if (LocalRuntimeService.probe(s).isEmpty()) {
      throw new IllegalStateException("the server announced in " + s.file() + " (pid " + s.pid() + ") does not answer at " + s.apiUrl());
    }
    ProcessHandle p = ProcessHandle.of(s.pid()).orElseThrow(() -> new IllegalStateException("pid " + s.pid() + " has just ended"));
    p.destroy();
    try {
      p.onExit().get(60, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("the server (pid " + s.pid() + ") did not stop within 60 s of SIGTERM");
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("waiting for the server (pid " + s.pid() + ") failed: " + e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
    out.println("stopped the server at " + s.apiUrl() + " (pid " + s.pid() + ")");
    return 0;
  }

  /** {@code 90s}, {@code 30m}, {@code 2h}, or ISO-8601 ({@code PT30M}). */
  static java.time.Duration duration(String name, String v) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,9})(ms|s|m|h)").matcher(v);
    try {
      java.time.Duration d;
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        d = switch (m.group(2)) {
          case "ms" -> java.time.Duration.ofMillis(n);
          case "s" -> java.time.Duration.ofSeconds(n);
          case "m" -> java.time.Duration.ofMinutes(n);
          default -> java.time.Duration.ofHours(n);
        };
      } else {
        d = java.time.Duration.parse(v);
      }
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, got '" + v + "'");
      }
      return d;
    } catch (java.time.format.DateTimeParseException e) {
      throw new IllegalArgumentException(name + " must be a duration such as 90s, 30m or 2h, got '" + v + "'");
    }
  }

  /** The server {@code serve} would start with these options. */
  static LocalServer.Builder serveOptions(Deque<String> opts, PrintStream out) {
    LocalServer.Builder b = LocalServer.builder()
        .apiPort(LocalServer.DEFAULT_API_PORT)
        .envdPort(LocalServer.DEFAULT_ENVD_PORT)
        .serverId("standalone")
        .progress(out::println);
    while (!opts.isEmpty()) {
      String o = opts.pop();
      switch (o) {
        case "--port" -> b.apiPort(intArg(opts, o));
        case "--envd-port" -> b.envdPort(intArg(opts, o));
        case "--api-key" -> b.apiKey(arg(opts, o));
        case "--keep-sandboxes" -> b.keepSandboxesOnClose(true);
        case "--internet-by-default" -> b.internetByDefault(true);
        case "--id" -> b.serverId(arg(opts, o));
        case "--host" -> b.host(arg(opts, o));
        case "--state-dir" -> b.stateDir(java.nio.file.Path.of(arg(opts, o)));
        case "--disk-mb" -> b.diskSizeMB(intArg(opts, o));
        case "--extra-ca-certs" -> b.extraCaCerts = java.nio.file.Path.of(arg(opts, o));
        case "--runtime" -> b.runtime(arg(opts, o));
        case "--upstream-proxy" -> b.upstreamProxy(arg(opts, o));
        case "--warm-pool-max" -> b.warmPoolMax(intArg(opts, o));
        case "--warm-pool" -> {
          String v = arg(opts, o);
          int eq = v.lastIndexOf('=');
          if (eq > 0) {
            b.warmPool(v.substring(0, eq), intValue(o, v.substring(eq + 1)));
          } else {
            b.warmPool(intValue(o, v));
          }
        }
        default -> throw new IllegalArgumentException("unknown option '" + o + "' for serve");
      }
    }
    return b;
  }

  private static int forward(Deque<String> opts, PrintStream out) {
    java.util.List<String> positional = new java.util.ArrayList<>();
    String apiUrl = System.getenv("E2B_API_URL");
    String apiKey = System.getenv("E2B_API_KEY");
    while (!opts.isEmpty()) {
      String o = opts.pop();
      switch (o) {
        case "--api-url" -> apiUrl = arg(opts, o);
        case "--api-key" -> apiKey = arg(opts, o);
        default -> {
          if (o.startsWith("--")) {
            throw new IllegalArgumentException("unknown option '" + o + "' for forward");
          }
          positional.add(o);
        }
      }
    }
    if (positional.size() != 2) {
      throw new IllegalArgumentException("usage: sandboxes-local forward SANDBOX_ID PORT [--api-url URL] [--api-key KEY]");
    }
    if (apiKey == null || apiKey.isBlank()) {
      throw new IllegalArgumentException("forward needs the server's API key: --api-key or E2B_API_KEY");
    }
    java.net.URI base = java.net.URI.create(apiUrl == null || apiUrl.isBlank() ? "http://127.0.0.1:" + LocalServer.DEFAULT_API_PORT : apiUrl);
    String path = "/local/sandboxes/" + java.net.URLEncoder.encode(positional.get(0), java.nio.charset.StandardCharsets.UTF_8)
        + "/ports/" + java.net.URLEncoder.encode(positional.get(1), java.nio.charset.StandardCharsets.UTF_8);
    try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
      java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(base.resolve(path))
          .header("X-API-KEY", apiKey).POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      com.fasterxml.jackson.databind.JsonNode body = io.sandboxes.e2b.internal.Json.parse(r.body().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      if (r.statusCode() != 200) {
        throw new IllegalStateException("the server at " + base + " answered " + r.statusCode() + ": " + body.path("message").asText(r.body()));
      }
      out.println(body.path("url").asText());
      return 0;
    } catch (java.io.IOException e) {
      throw new IllegalStateException("no answer from a server at " + base + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static int status(Deque<String> opts, PrintStream out) {
    if (!opts.isEmpty()) {
      throw new IllegalArgumentException("status takes no options");
    }
    java.util.List<com.github.dockerjava.api.model.Container> ours;
    try (DockerRuntime docker = DockerRuntime.connect()) {
      ours = docker.listOurs();
    }
    out.printf("%-22s %-22s %-9s %-26s %-26s %s%n", "SANDBOX", "SERVER", "DOCKER", "STARTED", "FIRST DEADLINE", "TEMPLATE");
    // server and template to how many unclaimed pool members
    java.util.Map<String, Integer> pools = new java.util.TreeMap<>();
    java.util.List<String> members = new java.util.ArrayList<>();
    int sandboxes = 0;
    int volumeHelpers = 0;
    for (com.github.dockerjava.api.model.Container c : ours) {
      java.util.Map<String, String> l = c.getLabels();
      if (l.containsKey(io.sandboxes.local.internal.VolumeWorkers.LABEL)) {
        volumeHelpers++; // the volume content API's helper of one volume: no sandbox
        continue;
      }
      String id = l.getOrDefault(DockerRuntime.LABEL_SANDBOX_ID, "");
      String name = c.getNames() == null || c.getNames().length == 0 ? "" : c.getNames()[0].replaceFirst("^/", "");
      boolean member = id.isEmpty() && "true".equals(l.get("io.sandboxes.pool-member"));
      if (member && name.startsWith("sandboxes-pool-")) {
        pools.merge(l.getOrDefault(DockerRuntime.LABEL_SERVER, "?") + " " + l.getOrDefault(DockerRuntime.LABEL_TEMPLATE, "?"), 1,
            Integer::sum);
        members.add(String.format("%-22s %-22s %-9s %s", name.substring("sandboxes-pool-".length()),
            l.getOrDefault(DockerRuntime.LABEL_SERVER, "?"), c.getState(), l.getOrDefault(DockerRuntime.LABEL_TEMPLATE, "?")));
        continue;
      }
      if (id.isEmpty()) {
        // a claimed pool member: its id is its name, its dates are in its server's state file
        id = member && name.startsWith("sandboxes-") ? name.substring("sandboxes-".length()) : "?";
      }
      sandboxes++;
      out.printf("%-22s %-22s %-9s %-26s %-26s %s%n", id,
          l.getOrDefault(DockerRuntime.LABEL_SERVER, "?"), c.getState(), l.getOrDefault(DockerRuntime.LABEL_STARTED, member ? "(warm pool)" : "?"),
          l.getOrDefault(DockerRuntime.LABEL_DEADLINE, "?"), l.getOrDefault(DockerRuntime.LABEL_TEMPLATE, "?"));
    }
    out.println(sandboxes + " sandbox container(s); a running server's GET /v2/sandboxes gives current deadlines and pause state");
    if (volumeHelpers > 0) {
      out.println(volumeHelpers + " volume helper container(s) (the volume content API's, stopped after a minute unused)");
    }
    if (pools.isEmpty()) {
      out.println("no warm pool members");
    } else {
      out.printf("%n%-22s %-22s %s%n", "WARM POOL SERVER", "TEMPLATE", "READY");
      pools.forEach((k, n) -> {
        String[] st = k.split(" ", 2);
        out.printf("%-22s %-22s %d%n", st[0], st[1], n);
      });
      // a member just claimed is renamed a moment after its create answers; until then it is listed here
      out.printf("%n%-22s %-22s %-9s %s%n", "MEMBER (ID IT TAKES)", "SERVER", "DOCKER", "TEMPLATE");
      members.forEach(out::println);
    }
    return 0;
  }

  private static int image(Deque<String> opts, PrintStream out) {
    String sub = opts.isEmpty() ? "" : opts.pop();
    if (sub.equals("list") && opts.isEmpty()) {
      java.util.List<com.github.dockerjava.api.model.Image> images;
      try (DockerRuntime docker = DockerRuntime.connect()) {
        images = docker.client().listImagesCmd().exec();
      }
      for (com.github.dockerjava.api.model.Image i : images) {
        String[] tags = i.getRepoTags();
        java.util.Map<String, String> labels = i.getLabels() == null ? java.util.Map.of() : i.getLabels();
        boolean base = tags != null && java.util.Arrays.stream(tags).anyMatch(t -> t.startsWith(BaseImage.REPOSITORY + ":"));
        String snapshot = labels.get("io.sandboxes.snapshot-id");
        if (base) {
          out.printf("base        %-40s %6d MB%s%n", String.join(",", tags), i.getSize() / 1_000_000,
              java.util.Arrays.asList(tags).contains(BaseImage.reference()) ? "  (current)" : "  (outdated)");
        } else if (snapshot != null) {
          out.printf("snapshot    %-40s %6d MB  of sandbox %s%n", snapshot, i.getSize() / 1_000_000,
              labels.getOrDefault("io.sandboxes.snapshot-sandbox", "?"));
        }
      }
      return 0;
    }
    boolean codeInterpreter = opts.size() == 1 && opts.peek().equals(io.sandboxes.local.internal.docker.CodeInterpreterImage.TEMPLATE);
    if (!sub.equals("build") || !(opts.isEmpty() || codeInterpreter)) {
      throw new IllegalArgumentException("usage: sandboxes-local image build [code-interpreter-v1] | image list");
    }
    String ref;
    try (DockerRuntime docker = DockerRuntime.connect()) {
      ref = BaseImage.ensure(docker, out::println);
      out.println("base image: " + ref);
      if (codeInterpreter) {
        long started = System.nanoTime();
        String ci = io.sandboxes.local.internal.docker.CodeInterpreterImage.ensure(docker, ref, out::println);
        out.println("code interpreter image: " + ci + " (ready in " + (System.nanoTime() - started) / 1_000_000_000L + " s)");
      }
    }
    return 0;
  }

  private static String arg(Deque<String> opts, String name) {
    if (opts.isEmpty()) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return opts.pop();
  }

  private static int intArg(Deque<String> opts, String name) {
    return intValue(name, arg(opts, name));
  }

  private static int intValue(String name, String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a number, got '" + v + "'");
    }
  }
}
