package io.sandboxes.e2b;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Which git configuration {@link Git#setConfig}, {@link Git#getConfig} and
 * {@link Git#configureUser} read or write, as E2B's {@code scope} and {@code path} options: the
 * user's ({@code --global}, the default as on E2B), the machine's ({@code --system}), or one
 * repository's ({@code --local}, which needs the repository's path).
 *
 * @param flag the option git is given: {@code --global}, {@code --system} or {@code --local}
 * @param repository the repository of a {@code --local} scope, null for the others
 * @since 0.1
 */
public record GitConfigScope(String flag, @Nullable String repository) {

  /** Checks that the flag is one of git's three, and that only {@code --local} names a repository. */
  public GitConfigScope {
    Objects.requireNonNull(flag, "flag");
    switch (flag) {
      case "--global", "--system" -> {
        if (repository != null) {
          throw new IllegalArgumentException("only the local scope names a repository, not " + flag);
        }
      }
      case "--local" -> {
        if (repository == null || repository.isEmpty()) {
          throw new IllegalArgumentException("a repository path is required for the local scope");
        }
      }
      default -> throw new IllegalArgumentException("git config scope must be --global, --system or --local, not " + flag);
    }
  }

  /**
   * The configuration of the user the command runs as ({@code ~/.gitconfig}).
   *
   * @return the global scope
   */
  public static GitConfigScope global() {
    return new GitConfigScope("--global", null);
  }

  /**
   * The configuration of the whole sandbox ({@code /etc/gitconfig}); writing it needs root.
   *
   * @return the system scope
   */
  public static GitConfigScope system() {
    return new GitConfigScope("--system", null);
  }

  /**
   * The configuration of one repository ({@code .git/config}).
   *
   * @param repository the repository's path in the sandbox
   * @return the local scope of that repository
   */
  public static GitConfigScope local(String repository) {
    return new GitConfigScope("--local", Objects.requireNonNull(repository, "repository"));
  }
}
