package io.sandboxes.e2b;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The state of a repository, as E2B's {@code GitStatus}: the branch, its upstream and how far
 * apart they are, and every changed file. Read from {@code git status --porcelain=1 -b -z}, so
 * paths with spaces, quotes or non-ASCII characters come as they are, unquoted.
 *
 * @param currentBranch the branch checked out, or null when HEAD is detached
 * @param upstream the branch's upstream, e.g. {@code origin/main}, or null when it has none
 * @param ahead how many commits the branch has that its upstream lacks
 * @param behind how many commits its upstream has that the branch lacks
 * @param detached whether HEAD is detached
 * @param fileStatus the changed, staged and untracked files, in git's order
 * @since 0.1
 */
public record GitStatus(@Nullable String currentBranch, @Nullable String upstream, int ahead, int behind,
    boolean detached, List<GitFileStatus> fileStatus) {

  /** Copies the list. */
  public GitStatus {
    fileStatus = List.copyOf(Objects.requireNonNull(fileStatus, "fileStatus"));
  }

  /**
   * Tells whether nothing changed: no tracked or untracked file differs.
   *
   * @return whether the file list is empty
   */
  public boolean isClean() {
    return fileStatus.isEmpty();
  }

  /**
   * Tells whether anything changed.
   *
   * @return whether the file list is not empty
   */
  public boolean hasChanges() {
    return !fileStatus.isEmpty();
  }

  /**
   * Tells whether a change is staged.
   *
   * @return whether {@link #stagedCount()} is not 0
   */
  public boolean hasStaged() {
    return stagedCount() > 0;
  }

  /**
   * Tells whether a file is untracked.
   *
   * @return whether {@link #untrackedCount()} is not 0
   */
  public boolean hasUntracked() {
    return untrackedCount() > 0;
  }

  /**
   * Tells whether a file has a merge conflict.
   *
   * @return whether {@link #conflictCount()} is not 0
   */
  public boolean hasConflicts() {
    return conflictCount() > 0;
  }

  /**
   * Counts the changed files.
   *
   * @return the size of the file list
   */
  public int totalCount() {
    return fileStatus.size();
  }

  /**
   * Counts the files with a staged change.
   *
   * @return how many are {@link GitFileStatus#staged()}
   */
  public int stagedCount() {
    return (int) fileStatus.stream().filter(GitFileStatus::staged).count();
  }

  /**
   * Counts the files without a staged change (untracked ones included, as on E2B).
   *
   * @return the total less the staged
   */
  public int unstagedCount() {
    return totalCount() - stagedCount();
  }

  /**
   * Counts the untracked files.
   *
   * @return how many are {@link GitStatusLabel#UNTRACKED}
   */
  public int untrackedCount() {
    return (int) fileStatus.stream().filter(f -> f.status() == GitStatusLabel.UNTRACKED).count();
  }

  /**
   * Counts the files with a merge conflict.
   *
   * @return how many are {@link GitStatusLabel#CONFLICT}
   */
  public int conflictCount() {
    return (int) fileStatus.stream().filter(f -> f.status() == GitStatusLabel.CONFLICT).count();
  }

  /**
   * Reads the output of {@code git status --porcelain=1 -b -z}.
   *
   * @throws IllegalArgumentException when the output is not of that form
   */
  static GitStatus parse(String output) {
    String[] fields = output.split("\0", -1);
    int i = 0;
    String branch = null;
    String upstream = null;
    int ahead = 0;
    int behind = 0;
    boolean detached = false;
    if (fields.length > 0 && fields[0].startsWith("## ")) {
      String info = fields[0].substring(3);
      i = 1;
      String counts = "";
      int bracket = info.indexOf(" [");
      if (bracket >= 0 && info.endsWith("]")) {
        counts = info.substring(bracket + 2, info.length() - 1);
        info = info.substring(0, bracket);
      }
      info = info.replaceFirst("^No commits yet on ", "").replaceFirst("^Initial commit on ", "");
      if (info.startsWith("HEAD (") || info.equals("HEAD")) {
        detached = true;
      } else {
        int dots = info.indexOf("...");
        branch = dots >= 0 ? info.substring(0, dots) : info;
        upstream = dots >= 0 ? info.substring(dots + 3) : null;
      }
      for (String part : counts.split(",")) {
        String p = part.strip();
        if (p.startsWith("ahead ")) {
          ahead = Integer.parseInt(p.substring(6).strip());
        } else if (p.startsWith("behind ")) {
          behind = Integer.parseInt(p.substring(7).strip());
        }
      }
    }
    List<GitFileStatus> files = new ArrayList<>();
    for (; i < fields.length; i++) {
      String f = fields[i];
      if (f.isEmpty()) {
        continue; // the terminator after the last entry
      }
      if (f.length() < 4 || f.charAt(2) != ' ') {
        throw new IllegalArgumentException("not a status entry: " + f);
      }
      char x = f.charAt(0);
      char y = f.charAt(1);
      String name = f.substring(3);
      String from = null;
      if (x == 'R' || x == 'C' || y == 'R' || y == 'C') {
        if (i + 1 >= fields.length || fields[i + 1].isEmpty()) {
          throw new IllegalArgumentException("a rename without its source path: " + f);
        }
        from = fields[++i];
      }
      GitStatusLabel label = x == '?' && y == '?' ? GitStatusLabel.UNTRACKED : GitStatusLabel.of(x, y);
      files.add(new GitFileStatus(name, label, x, y, from));
    }
    return new GitStatus(branch == null || branch.isEmpty() ? null : branch, upstream == null || upstream.isEmpty() ? null : upstream,
        ahead, behind, detached, files);
  }
}
