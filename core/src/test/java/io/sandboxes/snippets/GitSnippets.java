package io.sandboxes.snippets;

import io.sandboxes.e2b.Git;
import io.sandboxes.e2b.GitRepoCloneOptions;
import io.sandboxes.e2b.GitCommitOptions;
import io.sandboxes.e2b.GitPushOptions;
import io.sandboxes.e2b.GitStatus;
import io.sandboxes.e2b.LiveSandbox;

/**
 * The code examples of {@link Git}'s Javadoc, compiled with the tests and checked by javadoc
 * against their inline copies, as {@link CoreSnippets} does for the rest of core.
 */
final class GitSnippets {
  private GitSnippets() {}

  static void git(LiveSandbox sandbox, String token) {
    // @start region="git" :
    Git git = sandbox.git();
    String repo = "/home/user/app";
    git.clone("https://git.example.com/team/app.git", GitRepoCloneOptions.defaults()
        .withPath(repo)
        .withCredentials("bot", token));     // for this clone only: never written to disk
    sandbox.files().write(repo + "/NOTES.md", "checked\n");
    GitStatus status = git.status(repo);
    if (status.hasChanges()) {
      git.add(repo);
      git.commit(repo, "Add notes", GitCommitOptions.defaults().withAuthor("Bot", "bot@example.com"));
      git.push(repo, GitPushOptions.defaults().withCredentials("bot", token));
    }
    // @end
  }
}
