package io.sandboxes.local.git;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sandboxes.ExecOptions;
import io.sandboxes.ExecResult;
import io.sandboxes.e2b.CommandHandle;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.Git;
import io.sandboxes.e2b.GitAuthException;
import io.sandboxes.e2b.GitRepoCloneOptions;
import io.sandboxes.e2b.GitCommitOptions;
import io.sandboxes.e2b.GitConfigScope;
import io.sandboxes.e2b.GitCredentials;
import io.sandboxes.e2b.GitException;
import io.sandboxes.e2b.GitInitOptions;
import io.sandboxes.e2b.GitPullOptions;
import io.sandboxes.e2b.GitPushOptions;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.SharedServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Credentials of {@code sandbox.git()} against a git server over HTTP with Basic authentication,
 * run inside the sandbox ({@code git http-backend} behind a small Python server): refused without
 * them or with wrong ones, accepted with them, and never left on disk or shown in a message unless
 * the caller asked to store them.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GitCredentialsTest {
  private static final String USER = "bot";
  private static final String PASSWORD = "t0ken-with/slash+plus";
  private static final int PORT = 8419;
  private static final String URL = "http://127.0.0.1:" + PORT + "/project.git";

  private LiveSandbox sandbox;
  private Git git;
  private CommandHandle server;

  @BeforeAll
  void start(E2BApi e2b) throws IOException {
    sandbox = e2b.create();
    git = sandbox.git();
    byte[] script;
    try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/git/http-git-server.py"))) {
      script = in.readAllBytes();
    }
    sandbox.files().write("/tmp/http-git-server.py", script);
    git.init("/tmp/gitserver/project.git", GitInitOptions.defaults().withBare().withInitialBranch("main"));
    sandbox.exec("git -C /tmp/gitserver/project.git config http.receivepack true").orThrow();
    // a first commit, pushed by path, so that neither test depends on the other having pushed
    git.init("/tmp/seed", GitInitOptions.defaults().withInitialBranch("main"));
    sandbox.files().write("/tmp/seed/seed.md", "seed\n");
    git.add("/tmp/seed");
    git.commit("/tmp/seed", "seed", GitCommitOptions.defaults().withAuthor("Seed", "seed@example.com"));
    git.push("/tmp/seed", GitPushOptions.defaults().withRemote("/tmp/gitserver/project.git").withBranch("main"));
    server = sandbox.commands().start("python3 /tmp/http-git-server.py " + PORT + " /tmp/gitserver",
        ExecOptions.defaults().withTimeout(Duration.ofMinutes(10))
            .withEnv(Map.of("GIT_SERVER_USERNAME", USER, "GIT_SERVER_PASSWORD", PASSWORD)));
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() ->
        sandbox.exec("exec 3<>/dev/tcp/127.0.0.1/" + PORT).isSuccess());
  }

  @AfterAll
  void stop() {
    if (server != null) {
      sandbox.commands().kill(server.pid());
    }
    if (sandbox != null) {
      sandbox.close();
    }
  }

  /**
   * The files under the user's home (but for the clone asked to store them) that hold the password,
   * raw or percent-encoded; searched as root, and a search that could not look is a failure.
   */
  private String filesHoldingThePassword() {
    ExecResult r = sandbox.exec("grep -rlF --exclude-dir=stored -e 't0ken-with' /home/user",
        ExecOptions.defaults().withUser("root"));
    assertThat(r.exitCode()).as("grep's exit code (1: nothing found; 2: could not look): %s", r).isIn(0, 1);
    return r.stdout().strip();
  }

  @Test
  @DisplayName("clone, push and pull with credentials work; without them or with wrong ones they are GitAuthException; the password is on no disk and in no message")
  void credentialsForOneCommand() {
    assertThatThrownBy(() -> git.clone(URL, GitRepoCloneOptions.defaults().withPath("/home/user/anon")))
        .isInstanceOf(GitAuthException.class).hasMessageContaining("terminal prompts disabled");
    assertThatThrownBy(() -> git.clone(URL, GitRepoCloneOptions.defaults().withPath("/home/user/wrong")
        .withCredentials(USER, "wrong-password"))).isInstanceOf(GitAuthException.class)
        .hasMessageContaining("Authentication failed").hasMessageNotContaining("wrong-password");

    String repo = "/home/user/project";
    git.clone(URL, GitRepoCloneOptions.defaults().withPath(repo).withCredentials(USER, PASSWORD));
    assertThat(git.remoteGet(repo, "origin")).contains(URL);
    git.configureUser("Bot", "bot@example.com", GitConfigScope.local(repo));
    sandbox.files().write(repo + "/readme.md", "hello\n");
    git.add(repo);
    git.commit(repo, "first");
    assertThatThrownBy(() -> git.push(repo, GitPushOptions.defaults().withRemote("origin").withBranch("main")))
        .isInstanceOf(GitAuthException.class);
    git.push(repo, GitPushOptions.defaults().withBranch("main").withCredentials(USER, PASSWORD));
    assertThat(git.status(repo).upstream()).isEqualTo("origin/main");

    // a second clone, made with the credentials in its URL: they are taken out of it
    String other = "/home/user/other";
    git.clone("http://" + USER + ":t0ken-with%2Fslash%2Bplus@127.0.0.1:" + PORT + "/project.git",
        GitRepoCloneOptions.defaults().withPath(other));
    assertThat(git.remoteGet(other, "origin")).contains(URL);
    sandbox.files().write(other + "/second.md", "second\n");
    git.add(other);
    git.commit(other, "second", GitCommitOptions.defaults().withAuthor("Bot", "bot@example.com"));
    git.push(other, GitPushOptions.defaults().withCredentials(USER, PASSWORD));

    assertThatThrownBy(() -> git.pull(repo)).isInstanceOf(GitAuthException.class)
        .hasMessageContaining("could not read Username");
    git.pull(repo, GitPullOptions.defaults().withCredentials(USER, PASSWORD));
    assertThat(sandbox.files().read(repo + "/second.md")).isEqualTo("second\n");
    assertThat(filesHoldingThePassword()).as("files holding the password").isEmpty();
  }

  @Test
  @DisplayName("stored only when asked: dangerouslyStoreCredentials keeps them in origin's URL, dangerouslyAuthenticate in git's credential store")
  void storedWhenAsked() {
    String stored = "/home/user/stored";
    git.clone(URL, GitRepoCloneOptions.defaults().withPath(stored).withCredentials(USER, PASSWORD)
        .withDangerouslyStoredCredentials());
    assertThat(sandbox.exec("git -C " + stored + " remote get-url origin").stdout().strip())
        .isEqualTo("http://bot:t0ken-with%2Fslash%2Bplus@127.0.0.1:" + PORT + "/project.git");
    git.pull(stored); // no credentials given: the stored ones serve

    Git asRoot = git.withOptions(ExecOptions.defaults().withUser("root"));
    assertThatThrownBy(() -> asRoot.clone(URL, GitRepoCloneOptions.defaults().withPath("/root/before")))
        .isInstanceOf(GitAuthException.class);
    ExecResult approved = asRoot.dangerouslyAuthenticate(new GitCredentials(USER, PASSWORD), "127.0.0.1:" + PORT, "http");
    assertThat(approved.stdout() + approved.stderr()).doesNotContain(PASSWORD);
    assertThat(asRoot.getConfig("credential.helper")).contains("store");
    asRoot.clone(URL, GitRepoCloneOptions.defaults().withPath("/root/after"));
    assertThat(sandbox.exec("cat /root/.git-credentials", ExecOptions.defaults().withUser("root")).stdout())
        .contains("127.0.0.1%3a" + PORT).contains(USER);
    assertThatThrownBy(() -> asRoot.dangerouslyAuthenticate(new GitCredentials(USER, PASSWORD), "two\nlines", "http"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> git.clone("/tmp/gitserver/project.git", GitRepoCloneOptions.defaults().withCredentials(USER, PASSWORD)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining(PASSWORD);
    assertThat(GitException.class).isAssignableFrom(GitAuthException.class);
  }
}
