package io.sandboxes.e2b;

import java.util.Objects;

/**
 * A username and a password (or token) for a git server over HTTP(S), as E2B's {@code username}
 * and {@code password} options of {@code git.clone}, {@code git.push} and {@code git.pull}.
 *
 * <p>{@link Git} hands them to git for the one command only (through the command's environment
 * and a credential helper given on its command line), so they are never written into the
 * repository's configuration or a remote URL on disk, unless the caller asks for it with
 * {@link GitRepoCloneOptions#withDangerouslyStoredCredentials()} or
 * {@link Git#dangerouslyAuthenticate(GitCredentials)}. The password never shows in
 * {@link #toString()}, and is replaced by {@code [redacted]} in the output and the messages of
 * the results and exceptions of the call that used it.
 *
 * @param username the user name; not empty
 * @param password the password or token; not empty
 * @since 0.1
 */
public record GitCredentials(String username, String password) {

  /** Checks that both are given. */
  public GitCredentials {
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(password, "password");
    if (username.isEmpty() || password.isEmpty()) {
      throw new IllegalArgumentException("git credentials need both a username and a password");
    }
    if (username.indexOf('\n') >= 0 || password.indexOf('\n') >= 0 || username.indexOf('\0') >= 0
        || password.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("git credentials must not contain a line break or a NUL character");
    }
  }

  /**
   * Describes the credentials without the password.
   *
   * @return the username and a mask for the password
   */
  @Override
  public String toString() {
    return "GitCredentials[username=" + username + ", password=[redacted]]";
  }
}
