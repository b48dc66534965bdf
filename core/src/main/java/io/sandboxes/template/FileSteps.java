package io.sandboxes.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The shell commands of the builder's file steps and of {@code gitClone}: RUN steps made here, as
 * E2B's SDK makes them, each path single-quoted and placed after {@code --} so none is read as an
 * option.
 */
final class FileSteps {
  private FileSteps() {}

  static String remove(List<String> paths, FileStepOptions o) {
    refuse(o.mode() != null, "remove", "a mode");
    List<String> words = new ArrayList<>(List.of("rm"));
    if (o.recursive()) {
      words.add("-r");
    }
    if (o.force()) {
      words.add("-f");
    }
    return command(words, paths);
  }

  static String rename(String src, String dest, FileStepOptions o) {
    refuse(o.recursive(), "rename", "recursive");
    refuse(o.mode() != null, "rename", "a mode");
    List<String> words = new ArrayList<>(List.of("mv"));
    if (o.force()) {
      words.add("-f");
    }
    return command(words, List.of(src, dest));
  }

  static String makeDir(List<String> paths, FileStepOptions o) {
    refuse(o.force(), "makeDir", "force (it never fails for a folder that exists)");
    refuse(o.recursive(), "makeDir", "recursive (it always makes the parents)");
    List<String> words = new ArrayList<>(List.of("mkdir", "-p"));
    if (o.mode() != null) {
      words.add("-m");
      words.add(String.format("%04o", o.mode()));
    }
    return command(words, paths);
  }

  static String makeSymlink(String target, String link, FileStepOptions o) {
    refuse(o.recursive(), "makeSymlink", "recursive");
    refuse(o.mode() != null, "makeSymlink", "a mode");
    List<String> words = new ArrayList<>(List.of("ln", "-s"));
    if (o.force()) {
      // -n: a link to a folder at the destination is replaced, not followed into
      words.add("-f");
      words.add("-n");
    }
    return command(words, List.of(target, link));
  }

  static String gitClone(String url, @Nullable String path, GitCloneOptions o) {
    requirePath(url, "url");
    List<String> words = new ArrayList<>(List.of("git", "clone"));
    if (o.branch() != null) {
      words.add("--branch");
      words.add(Checks.shellQuote(o.branch()));
      words.add("--single-branch");
    }
    if (o.depth() > 0) {
      words.add("--depth");
      words.add(Integer.toString(o.depth()));
    }
    List<String> operands = new ArrayList<>(List.of(url));
    if (path != null) {
      operands.add(path);
    }
    return command(words, operands);
  }

  private static String command(List<String> words, List<String> operands) {
    Objects.requireNonNull(operands, "paths");
    if (operands.isEmpty()) {
      throw new IllegalArgumentException("name at least one path");
    }
    List<String> all = new ArrayList<>(words);
    all.add("--");
    for (String p : operands) {
      all.add(Checks.shellQuote(requirePath(p, "path")));
    }
    return String.join(" ", all);
  }

  private static String requirePath(String p, String name) {
    Checks.requireText(p, name);
    if (p.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(name + " must not hold a NUL character");
    }
    return p;
  }

  private static void refuse(boolean given, String step, String what) {
    if (given) {
      throw new IllegalArgumentException(step + " takes no " + what);
    }
  }
}
