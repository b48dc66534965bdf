package io.sandboxes.local.git;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.ExecOptions;
import io.sandboxes.e2b.E2BApi;
import io.sandboxes.e2b.Git;
import io.sandboxes.e2b.GitBranches;
import io.sandboxes.e2b.GitRepoCloneOptions;
import io.sandboxes.e2b.GitCommitOptions;
import io.sandboxes.e2b.GitConfigScope;
import io.sandboxes.e2b.GitException;
import io.sandboxes.e2b.GitFileStatus;
import io.sandboxes.e2b.GitInitOptions;
import io.sandboxes.e2b.GitPullOptions;
import io.sandboxes.e2b.GitPushOptions;
import io.sandboxes.e2b.GitRemoteAddOptions;
import io.sandboxes.e2b.GitResetMode;
import io.sandboxes.e2b.GitResetOptions;
import io.sandboxes.e2b.GitRestoreOptions;
import io.sandboxes.e2b.GitStatus;
import io.sandboxes.e2b.GitStatusLabel;
import io.sandboxes.e2b.GitUpstreamException;
import io.sandboxes.e2b.LiveSandbox;
import io.sandboxes.local.SharedServer;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code sandbox.git()} against the real local server and the sandbox's own git: repositories made,
 * changed, branched and committed in the sandbox, pushed to and pulled from a bare repository in it
 * (there is no network), and git's failures thrown with its own words.
 */
@ExtendWith(SharedServer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GitRepositoryTest {
  private LiveSandbox sandbox;
  private Git git;

  @BeforeAll
  void start(E2BApi e2b) {
    sandbox = e2b.create();
    git = sandbox.git();
  }

  @AfterAll
  void stop() {
    if (sandbox != null) {
      sandbox.close();
    }
  }

  private void write(String path, String text) {
    sandbox.files().write(path, text);
  }

  @Test
  @DisplayName("init, configureUser, status, add, commit, branches, createBranch, checkoutBranch, deleteBranch, reset and restore in one repository")
  void workInOneRepository() {
    String repo = "/home/user/work";
    git.init(repo, GitInitOptions.defaults().withInitialBranch("trunk"));
    git.configureUser("Local Tester", "tester@example.com", GitConfigScope.local(repo));
    assertThat(git.getConfig("user.name", GitConfigScope.local(repo))).contains("Local Tester");
    assertThat(git.getConfig("sandboxes.unset", GitConfigScope.local(repo))).isEmpty();

    write(repo + "/notes.txt", "one\n");
    write(repo + "/with space.txt", "x\n");
    GitStatus fresh = git.status(repo);
    assertThat(fresh.currentBranch()).isEqualTo("trunk");
    assertThat(fresh.fileStatus()).extracting(GitFileStatus::name).containsExactlyInAnyOrder("notes.txt", "with space.txt");
    assertThat(fresh.untrackedCount()).isEqualTo(2);

    git.add(repo, List.of("notes.txt"));
    GitStatus staged = git.status(repo);
    assertThat(staged.stagedCount()).isEqualTo(1);
    assertThat(staged.fileStatus()).contains(new GitFileStatus("notes.txt", GitStatusLabel.ADDED, 'A', ' ', null));
    git.add(repo);
    git.commit(repo, "first");
    assertThat(git.status(repo).isClean()).isTrue();
    assertThatThrownBy(() -> git.commit(repo, "nothing")).isInstanceOf(GitException.class);
    git.commit(repo, "empty", GitCommitOptions.defaults().withAllowEmpty(true).withAuthor("Other", "other@example.com"));
    assertThat(sandbox.exec("git -C " + repo + " log -1 --format=%an").stdout().strip()).isEqualTo("Other");

    git.createBranch(repo, "topic");
    assertThat(git.branches(repo)).isEqualTo(new GitBranches(List.of("topic", "trunk"), "topic"));
    write(repo + "/notes.txt", "one\ntwo\n");
    git.add(repo);
    git.commit(repo, "second");
    git.checkoutBranch(repo, "trunk");
    assertThat(git.branches(repo).currentBranch()).isEqualTo("trunk");
    assertThatThrownBy(() -> git.deleteBranch(repo, "topic")).isInstanceOf(GitException.class)
        .hasMessageContaining("not fully merged");
    git.deleteBranch(repo, "topic", true);
    assertThat(git.branches(repo).branches()).containsExactly("trunk");

    write(repo + "/notes.txt", "changed\n");
    git.restore(repo, GitRestoreOptions.of("notes.txt"));
    assertThat(sandbox.files().read(repo + "/notes.txt")).isEqualTo("one\n");

    write(repo + "/notes.txt", "staged\n");
    git.add(repo);
    git.restore(repo, GitRestoreOptions.of("notes.txt").withStaged(true));
    GitStatus unstaged = git.status(repo);
    assertThat(unstaged.hasStaged()).isFalse();
    assertThat(unstaged.fileStatus()).contains(new GitFileStatus("notes.txt", GitStatusLabel.MODIFIED, ' ', 'M', null));

    git.reset(repo, GitResetOptions.defaults().withMode(GitResetMode.HARD).withTarget("HEAD~1"));
    assertThat(sandbox.exec("git -C " + repo + " log -1 --format=%s").stdout().strip()).isEqualTo("first");
    assertThat(git.status(repo).isClean()).isTrue();
  }

  @Test
  @DisplayName("remoteAdd, remoteGet, push with setUpstream, clone, pull, and the missing upstream as GitUpstreamException, through a bare repository")
  void pushCloneAndPull() {
    String bare = "/home/user/shared.git";
    String a = "/home/user/a";
    String b = "/home/user/b";
    git.init(bare, GitInitOptions.defaults().withBare().withInitialBranch("main"));
    git.init(a, GitInitOptions.defaults().withInitialBranch("main"));
    git.configureUser("A", "a@example.com", GitConfigScope.local(a));
    write(a + "/f.txt", "from a\n");
    git.add(a);
    git.commit(a, "a1");

    assertThat(git.remoteGet(a, "origin")).isEmpty();
    git.remoteAdd(a, "origin", "/nowhere.git");
    assertThatThrownBy(() -> git.remoteAdd(a, "origin", bare)).isInstanceOf(GitException.class)
        .hasMessageContaining("already exists");
    git.remoteAdd(a, "origin", bare, GitRemoteAddOptions.defaults().withOverwrite());
    assertThat(git.remoteGet(a, "origin")).contains(bare);

    assertThatThrownBy(() -> git.push(a)).isInstanceOf(GitUpstreamException.class)
        .hasMessageContaining("has no upstream branch");
    assertThatThrownBy(() -> git.pull(a)).isInstanceOf(GitUpstreamException.class)
        .hasMessageContaining("no upstream configured");
    git.push(a, GitPushOptions.defaults().withRemote("origin").withBranch("main"));
    assertThat(git.status(a).upstream()).isEqualTo("origin/main");

    git.clone(bare, GitRepoCloneOptions.defaults().withPath(b).withBranch("main").withDepth(1));
    assertThat(sandbox.files().read(b + "/f.txt")).isEqualTo("from a\n");
    git.configureUser("B", "b@example.com", GitConfigScope.local(b));
    git.remoteAdd(b, "mirror", "/nowhere.git");
    git.remoteAdd(b, "mirror", bare, GitRemoteAddOptions.defaults().withOverwrite().withFetch());
    assertThat(sandbox.exec("git -C " + b + " branch -r").stdout()).contains("mirror/main");
    write(b + "/g.txt", "from b\n");
    git.add(b);
    git.commit(b, "b1");
    assertThat(git.status(b).ahead()).isEqualTo(1);
    git.push(b);

    git.pull(a);
    assertThat(sandbox.files().read(a + "/g.txt")).isEqualTo("from b\n");
    git.pull(a, GitPullOptions.defaults().withRemote("origin").withBranch("main"));
    GitStatus after = git.status(a);
    assertThat(after.ahead()).isZero();
    assertThat(after.behind()).isZero();
  }

  @Test
  @DisplayName("a failing git command is thrown with git's standard error, never answered as empty: no repository, no such remote, no such file")
  void failuresAreThrown() {
    String notRepo = "/tmp";
    assertThatThrownBy(() -> git.status(notRepo)).isInstanceOf(GitException.class)
        .hasMessageContaining("not a git repository")
        .satisfies(e -> assertThat(((GitException) e).result().exitCode()).isEqualTo(128));
    assertThatThrownBy(() -> git.remoteGet(notRepo, "origin")).isInstanceOf(GitException.class)
        .hasMessageContaining("not a git repository");
    assertThatThrownBy(() -> git.getConfig("user.name", GitConfigScope.local(notRepo))).isInstanceOf(GitException.class)
        .hasMessageContaining("config lookup of user.name in /tmp").hasMessageContaining("only be used inside a git repository");
    assertThatThrownBy(() -> git.clone("/home/user/none.git", GitRepoCloneOptions.defaults().withPath("/tmp/none")))
        .isInstanceOf(GitException.class).hasMessageContaining("does not exist");

    // the options of every command: here the user, whose global configuration is written
    Git asRoot = git.withOptions(ExecOptions.defaults().withUser("root"));
    asRoot.setConfig("sandboxes.marker", "root's");
    assertThat(asRoot.getConfig("sandboxes.marker")).isEqualTo(Optional.of("root's"));
    assertThat(git.getConfig("sandboxes.marker")).isEmpty();
  }
}
