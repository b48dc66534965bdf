package io.sandboxes.template;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/** The argument checks and shell quoting the template builder's steps share. */
final class Checks {
  /**
   * Words passed to the shell as they are; anything else is single-quoted. No {@code <} or
   * {@code >} (a requirement such as {@code requests>=2} would be a redirection) and no leading
   * {@code ~} (a home directory).
   */
  private static final Pattern PLAIN_WORD = Pattern.compile("^[A-Za-z0-9._+:=@/^-][A-Za-z0-9._+:=~@/^-]*$");

  private Checks() {}

  static String packageList(String[] packages) {
    Objects.requireNonNull(packages, "packages");
    if (packages.length == 0) {
      throw new IllegalArgumentException("name at least one package");
    }
    List<String> words = new ArrayList<>();
    for (String p : packages) {
      requireText(p, "package");
      words.add(word(p));
    }
    return String.join(" ", words);
  }

  /** {@code list} with {@code item} after it, as a new list. */
  static <T> List<T> append(List<T> list, T item) {
    List<T> out = new ArrayList<>(list);
    out.add(item);
    return out;
  }

  static String joined(List<String> commands) {
    Objects.requireNonNull(commands, "commands");
    if (commands.isEmpty()) {
      throw new IllegalArgumentException("commands must not be empty");
    }
    commands.forEach(c -> requireText(c, "command"));
    return String.join(" && ", commands);
  }

  /**
   * A copy source as a normalized relative path inside the context ({@code .} for the context itself).
   */
  static String relativeSource(String src) {
    requireText(src, "src");
    if (src.indexOf('\0') >= 0 || src.indexOf('\\') >= 0) {
      throw new IllegalArgumentException("copy source '" + src + "' must be a plain relative path ('/' separated)");
    }
    if (src.startsWith("/")) {
      throw new IllegalArgumentException("copy source '" + src + "' is an absolute path: it must be relative to the context"
          + " directory and inside it");
    }
    Path normalized = Path.of(src).normalize();
    String n = normalized.toString();
    if (n.equals("..") || n.startsWith("../")) {
      throw new IllegalArgumentException("copy source '" + src + "' leaves the context directory: it must stay inside it");
    }
    return n.isEmpty() ? "." : n;
  }

  /** Ignore patterns: each relative to the context, not blank, not negated, without NUL. */
  static List<String> ignorePatterns(List<String> patterns) {
    List<String> out = List.copyOf(Objects.requireNonNull(patterns, "patterns"));
    for (String p : out) {
      requireText(p, "an ignore pattern");
      if (p.indexOf('\0') >= 0 || p.startsWith("/") || p.startsWith("!")) {
        throw new IllegalArgumentException("ignore pattern '" + p + "' must be relative to the context directory and not negated");
      }
    }
    return out;
  }

  /** A COPY step's arguments, E2B's {@code [src, dest, user, mode]}. */
  static List<String> copyArgs(String src, String dest, CopyOptions options) {
    String rel = relativeSource(src);
    requireText(dest, "dest");
    if (dest.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("dest must not hold a NUL character");
    }
    String mode = options.mode() == null ? "" : String.format("%04o", options.mode());
    return List.of(rel, dest, options.user() == null ? "" : options.user(), mode);
  }

  /** One copy item per source, all to {@code dest} with the same options. */
  static List<CopyItem> copyItems(List<String> sources, String dest, CopyOptions options) {
    return nonEmpty(sources, "source").stream().map(src -> new CopyItem(src, dest, options)).toList();
  }

  static <T> List<T> nonEmpty(List<T> list, String what) {
    Objects.requireNonNull(list, what + "s");
    if (list.isEmpty()) {
      throw new IllegalArgumentException("name at least one " + what);
    }
    list.forEach(item -> Objects.requireNonNull(item, what));
    return list;
  }

  static java.util.Map<String, String> oneEnv(String name, String value) {
    java.util.Map<String, String> one = new java.util.LinkedHashMap<>();
    one.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
    return one;
  }

  static String requireText(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + " must not be blank");
    }
    return value;
  }

  static String requireUser(String user) {
    requireText(user, "user");
    if (!user.matches("^[A-Za-z0-9_][A-Za-z0-9_.-]*$")) {
      throw new IllegalArgumentException("user '" + user + "' is not a user name");
    }
    return user;
  }

  static String shellQuote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }

  private static final Pattern ENV_KEY = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");

  /** An ENV step's arguments: each name checked, each value without NUL, in the map's order. */
  static List<String> envArgs(java.util.Map<String, String> envs) {
    List<String> args = new ArrayList<>();
    new java.util.LinkedHashMap<>(envs).forEach((k, v) -> {
      if (k == null || !ENV_KEY.matcher(k).matches()) {
        throw new IllegalArgumentException("environment variable name '" + k + "' must be letters, digits and '_', not starting"
            + " with a digit");
      }
      Objects.requireNonNull(v, () -> "value of " + k);
      if (v.indexOf('\0') >= 0) {
        throw new IllegalArgumentException("value of " + k + " must not hold a NUL character");
      }
      args.add(k);
      args.add(v);
    });
    return args;
  }

  /** A word for the shell: as it is when plain, else single-quoted. */
  static String word(String w) {
    return PLAIN_WORD.matcher(w).matches() ? w : shellQuote(w);
  }
}
