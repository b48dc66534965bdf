package io.sandboxes.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.ExecResult;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What {@link Git} reads from git's output and writes into its command lines, without a sandbox. */
class GitParsingTest {

  @Test
  @DisplayName("status -z: branch, upstream, ahead and behind, and each kind of entry with its letters")
  void statusEntries() {
    String out = "## main...origin/main [ahead 2, behind 3]\0R  new name.txt\0old name.txt\0 M src/a.java\0"
        + "A  added\0UU both\0?? it's new\0D  gone\0";
    GitStatus s = GitStatus.parse(out);
    assertThat(s.currentBranch()).isEqualTo("main");
    assertThat(s.upstream()).isEqualTo("origin/main");
    assertThat(s.ahead()).isEqualTo(2);
    assertThat(s.behind()).isEqualTo(3);
    assertThat(s.detached()).isFalse();
    assertThat(s.fileStatus()).containsExactly(
        new GitFileStatus("new name.txt", GitStatusLabel.RENAMED, 'R', ' ', "old name.txt"),
        new GitFileStatus("src/a.java", GitStatusLabel.MODIFIED, ' ', 'M', null),
        new GitFileStatus("added", GitStatusLabel.ADDED, 'A', ' ', null),
        new GitFileStatus("both", GitStatusLabel.CONFLICT, 'U', 'U', null),
        new GitFileStatus("it's new", GitStatusLabel.UNTRACKED, '?', '?', null),
        new GitFileStatus("gone", GitStatusLabel.DELETED, 'D', ' ', null));
    assertThat(s.totalCount()).isEqualTo(6);
    assertThat(s.stagedCount()).isEqualTo(4);
    assertThat(s.unstagedCount()).isEqualTo(2);
    assertThat(s.untrackedCount()).isEqualTo(1);
    assertThat(s.conflictCount()).isEqualTo(1);
    assertThat(s.hasStaged()).isTrue();
    assertThat(s.hasConflicts()).isTrue();
    assertThat(s.isClean()).isFalse();
  }

  @Test
  @DisplayName("status -z: a detached HEAD, a branch with no commits, an upstream gone, a clean tree")
  void statusBranchLines() {
    GitStatus detached = GitStatus.parse("## HEAD (no branch)\0");
    assertThat(detached.detached()).isTrue();
    assertThat(detached.currentBranch()).isNull();
    assertThat(detached.isClean()).isTrue();

    GitStatus fresh = GitStatus.parse("## No commits yet on trunk\0?? a\0");
    assertThat(fresh.currentBranch()).isEqualTo("trunk");
    assertThat(fresh.upstream()).isNull();
    assertThat(fresh.hasUntracked()).isTrue();

    GitStatus gone = GitStatus.parse("## topic...origin/topic [gone]\0");
    assertThat(gone.currentBranch()).isEqualTo("topic");
    assertThat(gone.upstream()).isEqualTo("origin/topic");
    assertThat(gone.ahead()).isZero();
    assertThat(gone.behind()).isZero();

    assertThatThrownBy(() -> GitStatus.parse("## main\0R  only-one-path")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("an http(s) URL's credentials are found, taken out and put back percent-encoded; other URLs are left alone")
  void urlCredentials() {
    GitCredentials c = GitCommandLine.inlineCredentials("https://bot:p%40ss%3Aw0rd@git.example.com:8443/team/app.git");
    assertThat(c).isEqualTo(new GitCredentials("bot", "p@ss:w0rd"));
    assertThat(GitCommandLine.withoutCredentials("https://bot:secret@git.example.com/a.git")).isEqualTo("https://git.example.com/a.git");
    assertThat(GitCommandLine.withoutCredentials("git@github.com:a/b.git")).isEqualTo("git@github.com:a/b.git");
    assertThat(GitCommandLine.inlineCredentials("https://bot@git.example.com/a.git")).isNull();
    assertThat(GitCommandLine.inlineCredentials("file:///srv/a.git")).isNull();
    assertThat(GitCommandLine.withCredentials("http://h/a.git?x=1", new GitCredentials("b o", "p@ss/w:rd+")))
        .isEqualTo("http://b%20o:p%40ss%2Fw%3Ard%2B@h/a.git?x=1");
    assertThatThrownBy(() -> GitCommandLine.withCredentials("/srv/a.git", c)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("the password, raw or percent-encoded, is masked in results, exception messages and the credentials' toString")
  void passwordsMasked() {
    GitCredentials c = new GitCredentials("bot", "s3cr/et pw");
    ExecResult r = GitCommandLine.redact(new ExecResult(128, "s3cr/et pw", "fatal: http://bot:s3cr%2Fet%20pw@h/ refused",
        Duration.ZERO), c);
    assertThat(r.stdout()).isEqualTo("[redacted]");
    assertThat(r.stderr()).isEqualTo("fatal: http://bot:[redacted]@h/ refused");
    assertThat(new GitAuthException("push in /r", r, "refused").getMessage())
        .isEqualTo("git push in /r failed with exit code 128: fatal: http://bot:[redacted]@h/ refused (refused)");
    assertThat(c.toString()).doesNotContain("s3cr").contains("bot");
  }

  @Test
  @DisplayName("arguments are single-quoted for bash, single quotes included")
  void quoting() {
    assertThat(GitCommandLine.command("/r o", java.util.List.of("commit", "-m", "it's $HOME")))
        .isEqualTo("git -C '/r o' 'commit' '-m' 'it'\\''s $HOME'");
  }

  @Test
  @DisplayName("restore: the working tree by default, the index only when only staged is asked, never neither")
  void restoreDefaults() {
    assertThat(GitRestoreOptions.of("a").restoresWorktree()).isTrue();
    assertThat(GitRestoreOptions.of("a").restoresIndex()).isFalse();
    assertThat(GitRestoreOptions.of("a").withStaged(true).restoresWorktree()).isFalse();
    assertThat(GitRestoreOptions.of("a").withStaged(true).withWorktree(true).restoresWorktree()).isTrue();
    assertThat(GitRestoreOptions.of("a").withWorktree(false).withStaged(true).restoresIndex()).isTrue();
    assertThatThrownBy(() -> GitRestoreOptions.of("a").withStaged(false).withWorktree(false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> GitRestoreOptions.of()).isInstanceOf(IllegalArgumentException.class);
  }
}
