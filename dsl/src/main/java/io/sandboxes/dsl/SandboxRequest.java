package io.sandboxes.dsl;

import com.google.errorprone.annotations.CheckReturnValue;
import io.sandboxes.ExecResult;
import io.sandboxes.OnTimeout;
import io.sandboxes.SandboxNetwork;
import io.sandboxes.SandboxSpec;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.e2b.E2BSandboxProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A sandbox not yet created: each setter returns a new, validated request (nothing happens until
 * a terminal verb), so a request can be kept and reused.
 *
 * {@snippet class=io.sandboxes.snippets.DslSnippets region=sandbox-request :
 * SandboxRequest build = sandboxes.sandbox()
 *     .template("base")
 *     .timeout(Duration.ofMinutes(10))
 *     .env("CI", "true")
 *     .withVolume("proj-42", "/workspace/app")
 *     .allowOut("pypi.org", "*.pythonhosted.org");
 *
 * ExecResult once = build.exec("make -C /workspace/app");   // fresh sandbox, destroyed after
 * try (LiveSandbox live = build.create()) {                  // a live sandbox, killed on close
 *   live.exec("make -C /workspace/app");
 * }
 * build.run(sandbox -> sandbox.exec("pytest"));              // scoped: closed for you
 * }
 *
 * <p>Every setter returns a new request and leaves this one as it was, so a result must be used:
 * the class is {@code @CheckReturnValue}, and Error Prone or SpotBugs flag a request that was
 * configured and then dropped.
 *
 * @since 0.1
 */
@CheckReturnValue
public final class SandboxRequest {
  private static final Pattern DESTINATION = Pattern.compile(
      "^((\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\\d{1,3}(\\.\\d{1,3}){3}(/\\d{1,2})?)$");

  private final E2BSandboxProvider provider;
  private final SandboxSpec spec;
  private final List<String> allowOut;

  private SandboxRequest(E2BSandboxProvider provider, SandboxSpec spec, List<String> allowOut) {
    this.provider = provider;
    this.spec = spec;
    this.allowOut = List.copyOf(allowOut);
  }

  static SandboxRequest defaults(E2BSandboxProvider provider) {
    return new SandboxRequest(provider, SandboxSpec.defaults(), List.of());
  }

  private SandboxRequest with(SandboxSpec s) {
    return new SandboxRequest(provider, s, allowOut);
  }

  /**
   * Sets the template the sandbox boots from.
   *
   * @param template a template id, alias or snapshot id
   * @return a copy with it
   */
  public SandboxRequest template(String template) {
    return with(spec.withTemplate(Objects.requireNonNull(template, "template")));
  }

  /**
   * Boots from a template just built, by its name, as E2B's {@code Sandbox.create(alias)}.
   *
   * {@snippet :
   * BuildInfo built = sandboxes.buildTemplate(template, "my-tools", line -> System.out.println(line.message()));
   * try (LiveSandbox sandbox = sandboxes.sandbox().template(built).create()) { ... }
   * }
   *
   * @param built what {@link SandboxClient#buildTemplate} returned
   * @return a copy with it
   */
  public SandboxRequest template(io.sandboxes.template.BuildInfo built) {
    return template(Objects.requireNonNull(built, "built").name());
  }

  /**
   * Boots from the code interpreter's template ({@code code-interpreter-v1}), whose sandboxes run
   * code statefully with {@link LiveSandbox#runCode(String)}. The local runtime builds it on the
   * first request (a few minutes, once per machine).
   *
   * @return a copy with it
   */
  public SandboxRequest codeInterpreter() {
    return template(SandboxSpec.CODE_INTERPRETER_TEMPLATE);
  }

  /**
   * Sets how long the sandbox lives before {@link #onTimeout(OnTimeout)} applies.
   *
   * @param timeout positive
   * @return a copy with it
   */
  public SandboxRequest timeout(Duration timeout) {
    return with(spec.withTimeout(Objects.requireNonNull(timeout, "timeout")));
  }

  /**
   * Adds an environment variable every process in the sandbox sees.
   *
   * @param name variable name, non-blank, without {@code =}
   * @param value its value
   * @return a copy with it
   */
  public SandboxRequest env(String name, String value) {
    Objects.requireNonNull(value, "env value");
    if (Objects.requireNonNull(name, "env name").isBlank() || name.contains("=")) {
      throw new IllegalArgumentException("env name must be non-blank and without '=', got '" + name + "'");
    }
    Map<String, String> env = new HashMap<>(spec.env());
    env.put(name, value);
    return with(spec.withEnv(env));
  }

  /**
   * Adds environment variables, as {@link #env(String, String)} does for each.
   *
   * @param env variables to add
   * @return a copy with them
   */
  public SandboxRequest env(Map<String, String> env) {
    SandboxRequest r = this;
    for (Map.Entry<String, String> e : Objects.requireNonNull(env, "env").entrySet()) {
      r = r.env(e.getKey(), e.getValue());
    }
    return r;
  }

  /**
   * Adds an entry to the sandbox's metadata, which listings can filter on
   * ({@link SandboxClient#list(io.sandboxes.e2b.SandboxQuery)}).
   *
   * @param key metadata key, non-blank
   * @param value its value
   * @return a copy with it
   */
  public SandboxRequest metadata(String key, String value) {
    Objects.requireNonNull(value, "metadata value");
    if (Objects.requireNonNull(key, "metadata key").isBlank()) {
      throw new IllegalArgumentException("metadata key must not be blank");
    }
    Map<String, String> m = new HashMap<>(spec.metadata());
    m.put(key, value);
    return with(spec.withMetadata(m));
  }

  /**
   * Adds metadata entries, as {@link #metadata(String, String)} does for each.
   *
   * @param metadata entries to add
   * @return a copy with them
   */
  public SandboxRequest metadata(Map<String, String> metadata) {
    SandboxRequest r = this;
    for (Map.Entry<String, String> e : Objects.requireNonNull(metadata, "metadata").entrySet()) {
      r = r.metadata(e.getKey(), e.getValue());
    }
    return r;
  }

  /**
   * Mounts a volume, whose data outlives the sandbox.
   *
   * @param volume an existing volume's name
   * @param mountPath an absolute path other than {@code /}
   * @return a copy that mounts it there
   */
  public SandboxRequest withVolume(String volume, String mountPath) {
    return with(spec.withVolume(volume, mountPath));
  }

  /**
   * Lets the sandbox reach these destinations and nothing else (deny-by-default), sent in the
   * create request.
   *
   * @param destinations domains ({@code *.} wildcards allowed), IPs or CIDRs
   * @return a copy that allows them too
   */
  public SandboxRequest allowOut(String... destinations) {
    List<String> more = new ArrayList<>(allowOut);
    for (String d : Objects.requireNonNull(destinations, "allowOut")) {
      if (d == null || !DESTINATION.matcher(d).matches()) {
        throw new IllegalArgumentException("allowOut entries must be a domain, *.domain, IP or CIDR, got '" + d + "'");
      }
      more.add(d);
    }
    return new SandboxRequest(provider, spec, more);
  }

  /**
   * Sets what happens at the timeout.
   *
   * @param onTimeout kill (the default) or pause
   * @return a copy with it
   */
  public SandboxRequest onTimeout(OnTimeout onTimeout) {
    return with(spec.withOnTimeout(Objects.requireNonNull(onTimeout, "onTimeout")));
  }

  /**
   * Makes the sandbox resume by itself when it is called while paused (E2B's {@code autoResume}):
   * a command, a file call or code run then wakes it instead of throwing
   * {@link io.sandboxes.SandboxPausedException}. Set {@link #onTimeout(OnTimeout)} to
   * {@link OnTimeout#PAUSE} first: only a sandbox whose pause keeps its memory can resume on a call.
   *
   * @param autoResume whether a call wakes the paused sandbox
   * @return a copy with it
   * @throws IllegalArgumentException when the sandbox is not set to pause at its timeout
   */
  public SandboxRequest autoResume(boolean autoResume) {
    return with(spec.withAutoResume(autoResume));
  }

  /**
   * The sandbox this request describes.
   *
   * @return what will be created
   */
  public SandboxSpec spec() {
    return spec;
  }

  /**
   * The destinations the sandbox may reach.
   *
   * @return the allow-list that will be applied, empty for none
   */
  public List<String> allowOutList() {
    return allowOut;
  }

  /**
   * Creates the sandbox. An allow-list is sent deny-by-default in the create request, so the
   * sandbox never runs under another policy.
   *
   * @return the live sandbox; close it to destroy it
   */
  public LiveSandbox create() {
    SandboxSpec s = allowOut.isEmpty() ? spec : spec.withNetwork(SandboxNetwork.allowOnly(allowOut.toArray(String[]::new)));
    return provider.api().create(s);
  }

  /**
   * Runs one command in a fresh sandbox and destroys it.
   *
   * @param command a shell command
   * @return the command's result; a non-zero exit is data, not an exception
   */
  public ExecResult exec(String command) {
    try (LiveSandbox sandbox = create()) {
      return sandbox.exec(command);
    }
  }

  /**
   * Creates a sandbox, hands it to {@code work}, and kills it whatever happens.
   *
   * @param <T> what {@code work} makes
   * @param work what to do with the sandbox
   * @return what {@code work} returned
   */
  public <T> T apply(Function<? super LiveSandbox, T> work) {
    Objects.requireNonNull(work, "work");
    try (LiveSandbox sandbox = create()) {
      return work.apply(sandbox);
    }
  }

  /**
   * Creates a sandbox, hands it to {@code work}, and kills it whatever happens.
   *
   * @param work what to do with the sandbox
   */
  public void run(Consumer<? super LiveSandbox> work) {
    Objects.requireNonNull(work, "work");
    apply(s -> {
      work.accept(s);
      return null;
    });
  }

  @Override
  public String toString() {
    return "SandboxRequest[" + spec + (allowOut.isEmpty() ? "" : ", allowOut=" + allowOut) + "]";
  }
}
