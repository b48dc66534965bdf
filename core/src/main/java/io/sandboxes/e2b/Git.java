package io.sandboxes.e2b;

import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.SandboxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Git in the sandbox, as E2B's {@code sandbox.git}: clone, make and inspect repositories, branch,
 * stage, commit, reset and restore, push and pull, and read and write git's configuration. Each
 * call runs the {@code git} of the sandbox as a command (so the template needs git, as E2B's do).
 *
 * {@snippet class=io.sandboxes.snippets.GitSnippets region=git :
 * Git git = sandbox.git();
 * String repo = "/home/user/app";
 * git.clone("https://git.example.com/team/app.git", GitRepoCloneOptions.defaults()
 *     .withPath(repo)
 *     .withCredentials("bot", token));     // for this clone only: never written to disk
 * sandbox.files().write(repo + "/NOTES.md", "checked\n");
 * GitStatus status = git.status(repo);
 * if (status.hasChanges()) {
 *   git.add(repo);
 *   git.commit(repo, "Add notes", GitCommitOptions.defaults().withAuthor("Bot", "bot@example.com"));
 *   git.push(repo, GitPushOptions.defaults().withCredentials("bot", token));
 * }
 * }
 *
 * <p><b>Failures.</b> A git command that exits non-zero is thrown, never returned: a
 * {@link GitException} with git's standard error in its message and the whole result in
 * {@link GitException#result()}; a {@link GitAuthException} when a clone, push or pull wanted
 * credentials or had them refused; a {@link GitUpstreamException} when a push or pull had no
 * upstream. Arguments are checked before anything runs ({@link IllegalArgumentException}). Every
 * command runs with {@code GIT_TERMINAL_PROMPT=0}, so git never waits for a password.
 *
 * <p><b>Credentials.</b> Credentials given to {@link #clone}, {@link #push} or {@link #pull} reach
 * git through the command's environment and a credential helper on its command line, for that one
 * command (while it runs, its environment is listed by {@link Commands#list()}, as E2B's URL with
 * the password is): they are not written to the repository's configuration, a remote URL or any
 * file, where E2B's SDK writes them into the remote URL for the length of a push or pull. They are
 * stored only when asked: {@link GitRepoCloneOptions#withDangerouslyStoredCredentials()} (in the
 * clone's {@code origin} URL) and {@link #dangerouslyAuthenticate} (in git's credential store). The
 * password is {@code [redacted]} in the results and exception messages of the call. Obtained from
 * {@link LiveSandbox#git()}; cheap, holds nothing but its options, follows the handle across a resume.
 *
 * @since 0.1
 */
public final class Git {
  private final LiveSandbox sandbox;
  private final GitRunner git;

  Git(LiveSandbox sandbox) {
    this(sandbox, ExecOptions.defaults());
  }

  private Git(LiveSandbox sandbox, ExecOptions options) {
    this.sandbox = sandbox;
    this.git = new GitRunner(sandbox, options);
  }

  /**
   * Returns a {@code Git} whose commands run with these options, as E2B's per-call {@code envs},
   * {@code user}, {@code cwd} and {@code timeoutMs}: the user (whose {@code ~/.gitconfig} the global
   * scope is), extra environment, working directory (where a relative path or a clone without a
   * path goes), deadline (60 s by default) and output listeners.
   *
   * @param options the options of every command this {@code Git} runs; standard input stays closed
   * @return a {@code Git} with them
   * @throws IllegalArgumentException when the options keep standard input open: git would wait on it
   */
  public Git withOptions(ExecOptions options) {
    Objects.requireNonNull(options, "options");
    if (options.stdin()) {
      throw new IllegalArgumentException("git commands run with their input closed; leave stdin unset");
    }
    return new Git(sandbox, options);
  }

  /**
   * Clones a repository into the working directory, as E2B's {@code git.clone(url)}.
   *
   * @param url the repository's URL
   * @return the result of {@code git clone}
   * @throws GitAuthException when the server wanted credentials or refused them
   */
  public ExecResult clone(String url) {
    return clone(url, GitRepoCloneOptions.defaults());
  }

  /**
   * Clones a repository, as E2B's {@code git.clone(url, opts)}.
   *
   * @param url the repository's URL; a username and password written in an http(s) URL are taken
   *     out of it and used as credentials, so that the clone's {@code origin} does not keep them
   * @param opts the path, branch, depth and credentials
   * @return the result of {@code git clone}
   * @throws IllegalArgumentException when credentials come with a URL other than http(s), or
   *     both in the URL and in the options
   * @throws GitAuthException when the server wanted credentials or refused them
   * @throws GitException when the clone failed otherwise
   */
  public ExecResult clone(String url, GitRepoCloneOptions opts) {
    return git.cloneRepo(url, opts);
  }

  /**
   * Makes a repository, as E2B's {@code git.init(path)}.
   *
   * @param path the repository's folder, made when missing
   * @return the result of {@code git init}
   * @throws GitException when git failed
   */
  public ExecResult init(String path) {
    return init(path, GitInitOptions.defaults());
  }

  /**
   * Makes a repository, as E2B's {@code git.init(path, {bare, initialBranch})}.
   *
   * @param path the repository's folder, made when missing
   * @param opts whether it is bare, and the name of its first branch
   * @return the result of {@code git init}
   * @throws GitException when git failed
   */
  public ExecResult init(String path, GitInitOptions opts) {
    Objects.requireNonNull(path, "path");
    List<String> args = new ArrayList<>(List.of("init"));
    if (opts.initialBranch() != null) {
      args.addAll(List.of("--initial-branch", opts.initialBranch()));
    }
    if (opts.bare()) {
      args.add("--bare");
    }
    args.addAll(List.of("--", path));
    return git.ok("init of " + path, null, args);
  }

  /**
   * Adds a remote, as E2B's {@code git.remoteAdd(path, name, url)}.
   *
   * @param path the repository
   * @param name the remote's name, e.g. {@code "origin"}
   * @param url its URL
   * @return the result of {@code git remote add}
   * @throws GitException when git failed, e.g. a remote of that name exists
   */
  public ExecResult remoteAdd(String path, String name, String url) {
    return remoteAdd(path, name, url, GitRemoteAddOptions.defaults());
  }

  /**
   * Adds a remote, as E2B's {@code git.remoteAdd(path, name, url, {fetch, overwrite})}.
   *
   * @param path the repository
   * @param name the remote's name, e.g. {@code "origin"}
   * @param url its URL
   * @param opts whether to fetch it, and whether an existing remote of that name gets this URL
   * @return the result of the last git command run
   * @throws GitException when git failed
   */
  public ExecResult remoteAdd(String path, String name, String url, GitRemoteAddOptions opts) {
    requireNonEmpty(name, "remote name");
    requireNonEmpty(url, "remote URL");
    String action = "remote add of " + name + " in " + path;
    if (opts.overwrite() && remoteGet(path, name).isPresent()) {
      ExecResult set = git.ok(action, path, List.of("remote", "set-url", "--", name, url));
      return opts.fetch() ? git.ok("fetch of " + name + " in " + path, path, List.of("fetch", "--", name)) : set;
    }
    List<String> args = new ArrayList<>(List.of("remote", "add"));
    if (opts.fetch()) {
      args.add("-f");
    }
    args.addAll(List.of("--", name, url));
    return git.ok(action, path, args);
  }

  /**
   * Reads a remote's URL, as E2B's {@code git.remoteGet(path, name)}.
   *
   * @param path the repository
   * @param name the remote's name
   * @return its URL, or empty when the repository has no remote of that name
   * @throws GitException when git could not tell, e.g. the path is no repository (E2B's SDK
   *     answers "no URL" then)
   */
  public Optional<String> remoteGet(String path, String name) {
    requireNonEmpty(name, "remote name");
    ExecResult r = git.run(path, List.of("remote", "get-url", "--", name), null);
    if (r.exitCode() == 2) {
      return Optional.empty(); // git's answer for "no such remote"
    }
    return nonEmpty(GitRunner.check("remote get-url of " + name + " in " + path, r).stdout());
  }

  /**
   * Reads the state of a repository, as E2B's {@code git.status(path)}.
   *
   * @param path the repository
   * @return its branch, upstream and changed files
   * @throws GitException when git failed, e.g. the path is no repository
   */
  public GitStatus status(String path) {
    ExecResult r = git.ok("status of " + path, path, List.of("status", "--porcelain=1", "-b", "-z"));
    try {
      return GitStatus.parse(r.stdout());
    } catch (IllegalArgumentException e) {
      throw new SandboxException("could not read the git status of " + path + ": " + e.getMessage(), e);
    }
  }

  /**
   * Lists the local branches, as E2B's {@code git.branches(path)}.
   *
   * @param path the repository
   * @return the branches and the one checked out
   * @throws GitException when git failed
   */
  public GitBranches branches(String path) {
    ExecResult r = git.ok("branch listing of " + path, path, List.of("branch", "--format=%(HEAD)%09%(refname)"));
    List<String> names = new ArrayList<>();
    String current = null;
    for (String line : r.stdout().split("\n")) {
      int tab = line.indexOf('\t');
      if (tab < 0 || !line.startsWith("refs/heads/", tab + 1)) {
        continue; // an empty line, or the entry of a detached HEAD, which is no branch
      }
      String name = line.substring(tab + 1 + "refs/heads/".length());
      names.add(name);
      if (line.charAt(0) == '*') {
        current = name;
      }
    }
    return new GitBranches(names, current);
  }

  /**
   * Makes a branch and checks it out, as E2B's {@code git.createBranch(path, branch)}.
   *
   * @param path the repository
   * @param branch the new branch's name
   * @return the result of {@code git checkout -b}
   * @throws GitException when git failed, e.g. the branch exists
   */
  public ExecResult createBranch(String path, String branch) {
    requireNonEmpty(branch, "branch");
    return git.ok("creation of branch " + branch + " in " + path, path, List.of("checkout", "-b", branch));
  }

  /**
   * Checks a branch out, as E2B's {@code git.checkoutBranch(path, branch)}.
   *
   * @param path the repository
   * @param branch the branch
   * @return the result of {@code git checkout}
   * @throws GitException when git failed, e.g. no such branch
   */
  public ExecResult checkoutBranch(String path, String branch) {
    requireNonEmpty(branch, "branch");
    return git.ok("checkout of " + branch + " in " + path, path, List.of("checkout", branch, "--"));
  }

  /**
   * Deletes a merged branch, as E2B's {@code git.deleteBranch(path, branch)}.
   *
   * @param path the repository
   * @param branch the branch
   * @return the result of {@code git branch -d}
   * @throws GitException when git failed, e.g. the branch is not merged
   */
  public ExecResult deleteBranch(String path, String branch) {
    return deleteBranch(path, branch, false);
  }

  /**
   * Deletes a branch, as E2B's {@code git.deleteBranch(path, branch, {force})}.
   *
   * @param path the repository
   * @param branch the branch
   * @param force whether an unmerged branch is deleted too ({@code -D})
   * @return the result of {@code git branch -d} or {@code -D}
   * @throws GitException when git failed
   */
  public ExecResult deleteBranch(String path, String branch, boolean force) {
    requireNonEmpty(branch, "branch");
    return git.ok("deletion of branch " + branch + " in " + path, path, List.of("branch", force ? "-D" : "-d", "--", branch));
  }

  /**
   * Stages every change, as E2B's {@code git.add(path)} ({@code git add -A}).
   *
   * @param path the repository
   * @return the result of {@code git add}
   * @throws GitException when git failed
   */
  public ExecResult add(String path) {
    return add(path, List.of());
  }

  /**
   * Stages these files, as E2B's {@code git.add(path, {files})}.
   *
   * @param path the repository
   * @param files paths relative to the repository; empty stages every change
   * @return the result of {@code git add}
   * @throws GitException when git failed, e.g. a path matches no file
   */
  public ExecResult add(String path, List<String> files) {
    List<String> args = new ArrayList<>(List.of("add"));
    if (files.isEmpty()) {
      args.add("-A");
    } else {
      args.add("--");
      args.addAll(files);
    }
    return git.ok("add in " + path, path, args);
  }

  /**
   * Commits what is staged, as E2B's {@code git.commit(path, message)}.
   *
   * @param path the repository
   * @param message the commit message
   * @return the result of {@code git commit}
   * @throws GitException when git failed, e.g. nothing is staged or no author is configured
   */
  public ExecResult commit(String path, String message) {
    return commit(path, message, GitCommitOptions.defaults());
  }

  /**
   * Commits what is staged, as E2B's {@code git.commit(path, message, {authorName, authorEmail,
   * allowEmpty})}.
   *
   * @param path the repository
   * @param message the commit message
   * @param opts the author for this commit, and whether an empty commit is made
   * @return the result of {@code git commit}
   * @throws GitException when git failed
   */
  public ExecResult commit(String path, String message, GitCommitOptions opts) {
    Objects.requireNonNull(message, "message");
    List<String> args = new ArrayList<>();
    if (opts.authorName() != null) {
      args.addAll(List.of("-c", "user.name=" + opts.authorName()));
    }
    if (opts.authorEmail() != null) {
      args.addAll(List.of("-c", "user.email=" + opts.authorEmail()));
    }
    args.addAll(List.of("commit", "-m", message));
    if (opts.allowEmpty()) {
      args.add("--allow-empty");
    }
    return git.ok("commit in " + path, path, args);
  }

  /**
   * Resets HEAD and the index, as E2B's {@code git.reset(path)}.
   *
   * @param path the repository
   * @return the result of {@code git reset}
   * @throws GitException when git failed
   */
  public ExecResult reset(String path) {
    return reset(path, GitResetOptions.defaults());
  }

  /**
   * Resets, as E2B's {@code git.reset(path, {mode, target, paths})}.
   *
   * @param path the repository
   * @param opts the mode, the commit to reset to, and the paths
   * @return the result of {@code git reset}
   * @throws GitException when git failed, e.g. no such commit
   */
  public ExecResult reset(String path, GitResetOptions opts) {
    List<String> args = new ArrayList<>(List.of("reset"));
    if (opts.mode() != null) {
      args.add(opts.mode().flag());
    }
    if (opts.target() != null) {
      args.add(opts.target());
    }
    if (!opts.paths().isEmpty()) {
      args.add("--");
      args.addAll(opts.paths());
    }
    return git.ok("reset in " + path, path, args);
  }

  /**
   * Restores files, as E2B's {@code git.restore(path, {paths, staged, worktree, source})}.
   *
   * @param path the repository
   * @param opts the paths, and what to restore them in and from
   * @return the result of {@code git restore}
   * @throws GitException when git failed, e.g. a path matches no file
   */
  public ExecResult restore(String path, GitRestoreOptions opts) {
    List<String> args = new ArrayList<>(List.of("restore"));
    if (opts.restoresWorktree()) {
      args.add("--worktree");
    }
    if (opts.restoresIndex()) {
      args.add("--staged");
    }
    if (opts.source() != null) {
      args.addAll(List.of("--source", opts.source()));
    }
    args.add("--");
    args.addAll(opts.paths());
    return git.ok("restore in " + path, path, args);
  }

  /**
   * Pushes the branch to its upstream, as E2B's {@code git.push(path)}.
   *
   * @param path the repository
   * @return the result of {@code git push}
   * @throws GitUpstreamException when the branch has no upstream
   */
  public ExecResult push(String path) {
    return push(path, GitPushOptions.defaults());
  }

  /**
   * Pushes, as E2B's {@code git.push(path, {remote, branch, setUpstream, username, password})}.
   * With credentials or a branch but no remote, the repository's only remote is pushed to.
   *
   * @param path the repository
   * @param opts the remote, branch, upstream setting and credentials
   * @return the result of {@code git push}
   * @throws IllegalArgumentException when a remote is needed and the repository has not exactly one
   * @throws GitUpstreamException when there is no upstream to push to
   * @throws GitAuthException when the server wanted credentials or refused them
   * @throws GitException when the push failed otherwise
   */
  public ExecResult push(String path, GitPushOptions opts) {
    return git.push(path, opts);
  }

  /**
   * Pulls the branch's upstream, as E2B's {@code git.pull(path)}.
   *
   * @param path the repository
   * @return the result of {@code git pull}
   * @throws GitUpstreamException when the branch has no upstream
   */
  public ExecResult pull(String path) {
    return pull(path, GitPullOptions.defaults());
  }

  /**
   * Pulls, as E2B's {@code git.pull(path, {remote, branch, username, password})}. With credentials
   * or a branch but no remote, the repository's only remote is pulled from.
   *
   * @param path the repository
   * @param opts the remote, branch and credentials
   * @return the result of {@code git pull}
   * @throws IllegalArgumentException when a remote is needed and the repository has not exactly one
   * @throws GitUpstreamException when neither remote nor branch is given and the branch has no
   *     upstream (checked before pulling, as on E2B)
   * @throws GitAuthException when the server wanted credentials or refused them
   * @throws GitException when the pull failed otherwise
   */
  public ExecResult pull(String path, GitPullOptions opts) {
    return git.pull(path, opts);
  }

  /**
   * Writes a value of the user's git configuration, as E2B's {@code git.setConfig(key, value)}.
   *
   * @param key e.g. {@code "pull.rebase"}
   * @param value the value
   * @return the result of {@code git config --global}
   * @throws GitException when git failed
   */
  public ExecResult setConfig(String key, String value) {
    return setConfig(key, value, GitConfigScope.global());
  }

  /**
   * Writes a value of git's configuration, as E2B's {@code git.setConfig(key, value, {scope,
   * path})}.
   *
   * @param key e.g. {@code "pull.rebase"}
   * @param value the value
   * @param scope whose configuration
   * @return the result of {@code git config}
   * @throws GitException when git failed, e.g. an invalid key
   */
  public ExecResult setConfig(String key, String value, GitConfigScope scope) {
    requireNonEmpty(key, "config key");
    Objects.requireNonNull(value, "value");
    return git.ok("config of " + key + where(scope), scope.repository(), List.of("config", scope.flag(), "--", key, value));
  }

  /**
   * Reads a value of the user's git configuration, as E2B's {@code git.getConfig(key)}.
   *
   * @param key e.g. {@code "user.name"}
   * @return its value, or empty when it is not set
   * @throws GitException when git could not tell (E2B's SDK answers "not set" then)
   */
  public Optional<String> getConfig(String key) {
    return getConfig(key, GitConfigScope.global());
  }

  /**
   * Reads a value of git's configuration, as E2B's {@code git.getConfig(key, {scope, path})}.
   *
   * @param key e.g. {@code "user.name"}
   * @param scope whose configuration
   * @return its value, or empty when it is not set there
   * @throws GitException when git could not tell, e.g. the local scope's path is no repository
   */
  public Optional<String> getConfig(String key, GitConfigScope scope) {
    requireNonEmpty(key, "config key");
    ExecResult r = git.run(scope.repository(), List.of("config", scope.flag(), "--get", "--", key), null);
    if (r.exitCode() == 1 && r.stderr().isBlank()) {
      return Optional.empty(); // git's answer for "not set"
    }
    return nonEmpty(GitRunner.check("config lookup of " + key + where(scope), r).stdout());
  }

  /**
   * Sets the user's name and email for commits, as E2B's {@code git.configureUser(name, email)}.
   *
   * @param name the value of {@code user.name}
   * @param email the value of {@code user.email}
   * @return the result of the second {@code git config}
   * @throws GitException when git failed
   */
  public ExecResult configureUser(String name, String email) {
    return configureUser(name, email, GitConfigScope.global());
  }

  /**
   * Sets the name and email for commits, as E2B's {@code git.configureUser(name, email, {scope,
   * path})}.
   *
   * @param name the value of {@code user.name}
   * @param email the value of {@code user.email}
   * @param scope whose configuration
   * @return the result of the second {@code git config}
   * @throws GitException when git failed
   */
  public ExecResult configureUser(String name, String email, GitConfigScope scope) {
    requireNonEmpty(name, "name");
    requireNonEmpty(email, "email");
    setConfig("user.name", name, scope);
    return setConfig("user.email", email, scope);
  }

  /**
   * Stores credentials for github.com over HTTPS, as E2B's {@code git.dangerouslyAuthenticate}.
   *
   * @param credentials the username and password or token
   * @return the result of {@code git credential approve}
   * @throws GitException when git failed
   */
  public ExecResult dangerouslyAuthenticate(GitCredentials credentials) {
    return dangerouslyAuthenticate(credentials, "github.com", "https");
  }

  /**
   * Stores credentials for a host in git's credential store, as E2B's
   * {@code git.dangerouslyAuthenticate({username, password, host, protocol})}: sets the user's
   * {@code credential.helper} to {@code store} and approves the credentials, which git then writes
   * in plain text to {@code ~/.git-credentials} of the user the command runs as. Every later git
   * command of that user, and anything that can read that file, has them.
   *
   * @param credentials the username and password or token
   * @param host the host they are for, e.g. {@code "github.com"} or {@code "git.example.com:8443"}
   * @param protocol {@code "https"} or {@code "http"}
   * @return the result of {@code git credential approve}
   * @throws GitException when git failed
   */
  public ExecResult dangerouslyAuthenticate(GitCredentials credentials, String host, String protocol) {
    return git.authenticate(credentials, host, protocol);
  }

  static String requireNonEmpty(String value, String what) {
    Objects.requireNonNull(value, what);
    if (value.isEmpty()) {
      throw new IllegalArgumentException(what + " must not be empty");
    }
    return value;
  }

  private static String where(GitConfigScope scope) {
    return scope.repository() != null ? " in " + scope.repository() : " (" + scope.flag() + ")";
  }

  private static Optional<String> nonEmpty(String stdout) {
    String s = stdout.strip();
    return s.isEmpty() ? Optional.empty() : Optional.of(s);
  }
}
