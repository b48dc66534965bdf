package io.sandboxes.e2b;

import static io.sandboxes.e2b.GitCommandLine.command;

import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Runs {@link Git}'s commands in one sandbox with one set of options: the environment git needs
 * (no prompts, credentials for the helper), the password out of every result, and a non-zero exit
 * turned into the right exception.
 */
final class GitRunner {
  static final String UPSTREAM_ADVICE = "no upstream branch is configured: name the remote and branch, "
      + "or push once to a named remote with setUpstream";

  private final LiveSandbox sandbox;
  private final ExecOptions options;

  GitRunner(LiveSandbox sandbox, ExecOptions options) {
    this.sandbox = sandbox;
    this.options = options;
  }

  /** A clone, push or pull: credentials through the helper, and git's complaints typed. */
  ExecResult remote(String action, List<String> args, @Nullable String repo, @Nullable GitCredentials credentials,
      boolean upstreamMatters) {
    ExecResult r = run(repo, args, credentials);
    if (r.exitCode() == 0) {
      return r;
    }
    if (GitCommandLine.isAuthFailure(r)) {
      throw new GitAuthException(action, r, credentials == null
          ? "the server asks for credentials: give a username and password or token"
          : "the server refused the credentials given");
    }
    if (upstreamMatters && GitCommandLine.isMissingUpstream(r)) {
      throw new GitUpstreamException(action, r, UPSTREAM_ADVICE);
    }
    throw new GitException(action, r);
  }

  /** The repository's one remote; refused when it has none or several. */
  String onlyRemote(String path) {
    List<String> remotes = ok("remote listing of " + path, path, List.of("remote")).stdout().lines()
        .map(String::strip).filter(s -> !s.isEmpty()).toList();
    if (remotes.size() != 1) {
      throw new IllegalArgumentException("name the remote: the repository at " + path + " has " + remotes.size()
          + " remotes " + remotes);
    }
    return remotes.get(0);
  }

  /** Runs git and throws unless it exited 0. */
  ExecResult ok(String action, @Nullable String repo, List<String> args) {
    return check(action, run(repo, args, null));
  }

  /** The result when it exited 0, a {@link GitException} otherwise. */
  static ExecResult check(String action, ExecResult r) {
    if (r.exitCode() != 0) {
      throw new GitException(action, r);
    }
    return r;
  }

  /** Runs git; its result with the password redacted, whatever the exit code. */
  ExecResult run(@Nullable String repo, List<String> args, @Nullable GitCredentials credentials) {
    List<String> all = new ArrayList<>();
    if (credentials != null) {
      all.addAll(GitCommandLine.HELPER_ARGS);
    }
    all.addAll(args);
    return exec(command(repo, all), credentials, Map.of());
  }

  /** Runs a command line with git's environment, the credentials' and these extra variables. */
  ExecResult exec(String commandLine, @Nullable GitCredentials credentials, Map<String, String> extra) {
    Map<String, String> env = new HashMap<>();
    env.put("GIT_TERMINAL_PROMPT", "0");
    env.putAll(options.env());
    env.putAll(extra);
    if (credentials != null) {
      env.put(GitCommandLine.USERNAME_ENV, credentials.username());
      env.put(GitCommandLine.PASSWORD_ENV, credentials.password());
    }
    return GitCommandLine.redact(sandbox.exec(commandLine, options.withEnv(env)), credentials);
  }

  /** {@link Git#clone(String, GitRepoCloneOptions)}: credentials out of the URL, and back in only when asked to store them. */
  ExecResult cloneRepo(String url, GitRepoCloneOptions opts) {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(opts, "opts");
    GitCredentials credentials = opts.credentials();
    GitCredentials inline = GitCommandLine.inlineCredentials(url);
    String target = url;
    if (inline != null) {
      if (credentials != null) {
        throw new IllegalArgumentException("credentials were given both in the URL and in the options");
      }
      credentials = inline;
      target = GitCommandLine.withoutCredentials(url);
    }
    if (credentials != null && !GitCommandLine.isHttp(target)) {
      throw new IllegalArgumentException("only http(s) git URLs take a username and password");
    }
    if (credentials != null && opts.dangerouslyStoreCredentials()) {
      target = GitCommandLine.withCredentials(target, credentials);
    }
    List<String> args = new ArrayList<>(List.of("clone", target));
    if (opts.branch() != null) {
      args.addAll(List.of("--branch", opts.branch(), "--single-branch"));
    }
    if (opts.depth() > 0) {
      args.addAll(List.of("--depth", Integer.toString(opts.depth())));
    }
    if (opts.path() != null) {
      args.addAll(List.of("--", opts.path()));
    }
    return remote("clone of " + GitCommandLine.withoutCredentials(url), args, null, credentials, false);
  }

  /** {@link Git#push(String, GitPushOptions)}: the only remote when credentials or a branch come without one. */
  ExecResult push(String path, GitPushOptions opts) {
    String remote = opts.remote();
    if (remote == null && (opts.credentials() != null || opts.branch() != null)) {
      remote = onlyRemote(path);
    }
    List<String> args = new ArrayList<>(List.of("push"));
    if (opts.setUpstream() && remote != null) {
      args.add("--set-upstream");
    }
    if (remote != null) {
      args.addAll(List.of("--", remote));
      if (opts.branch() != null) {
        args.add(opts.branch());
      }
    }
    return remote("push in " + path, args, path, opts.credentials(), true);
  }

  /** {@link Git#pull(String, GitPullOptions)}: the upstream checked first when nothing is named, as on E2B. */
  ExecResult pull(String path, GitPullOptions opts) {
    String action = "pull in " + path;
    if (opts.remote() == null && opts.branch() == null) {
      ExecResult upstream = run(path, List.of("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}"), null);
      if (upstream.exitCode() != 0 && GitCommandLine.isMissingUpstream(upstream)) {
        throw new GitUpstreamException(action, upstream, UPSTREAM_ADVICE);
      }
      check(action, upstream);
    }
    String remote = opts.remote();
    if (remote == null && (opts.credentials() != null || opts.branch() != null)) {
      remote = onlyRemote(path);
    }
    List<String> args = new ArrayList<>(List.of("pull"));
    if (remote != null) {
      args.addAll(List.of("--", remote));
      if (opts.branch() != null) {
        args.add(opts.branch());
      }
    }
    return remote(action, args, path, opts.credentials(), true);
  }

  /** {@link Git#dangerouslyAuthenticate}: the credential store set up, and the credentials approved from the environment. */
  ExecResult authenticate(GitCredentials credentials, String host, String protocol) {
    Objects.requireNonNull(credentials, "credentials");
    String h = Git.requireNonEmpty(host, "host").strip();
    String p = Git.requireNonEmpty(protocol, "protocol").strip();
    if (h.isEmpty() || p.isEmpty() || (h + p).chars().anyMatch(c -> c == '\n' || c == '\0')) {
      throw new IllegalArgumentException("host and protocol must be one line of text each");
    }
    ok("credential store setup", null, List.of("config", "--global", "credential.helper", "store"));
    Map<String, String> env = Map.of("SANDBOXES_GIT_PROTOCOL", p, "SANDBOXES_GIT_HOST", h);
    String approve = "set -o pipefail; printf 'protocol=%s\\nhost=%s\\nusername=%s\\npassword=%s\\n\\n' \"$SANDBOXES_GIT_PROTOCOL\" "
        + "\"$SANDBOXES_GIT_HOST\" \"$" + GitCommandLine.USERNAME_ENV + "\" \"$" + GitCommandLine.PASSWORD_ENV + "\" | "
        + command(null, List.of("credential", "approve"));
    return check("credential approve for " + h, exec(approve, credentials, env));
  }
}
