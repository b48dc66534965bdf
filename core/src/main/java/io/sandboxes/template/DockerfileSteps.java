package io.sandboxes.template;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A Dockerfile read into a {@link Template}, as E2B's SDK reads one (see
 * {@link Template#fromDockerfile(String)} for what is taken and what is refused). Each refusal names
 * the line of the instruction.
 */
final class DockerfileSteps {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern DIRECTIVE = Pattern.compile("^#\\s*([A-Za-z]+)\\s*=\\s*(\\S+)\\s*$");
  private static final Pattern HEREDOC = Pattern.compile("(^|\\s)<<-?[\"']?[A-Za-z_]");
  private static final Pattern ARCHIVE = Pattern.compile(".*\\.(tar|tar\\.gz|tgz|tar\\.bz2|tbz2?|tar\\.xz|txz|tar\\.zst)$",
      Pattern.CASE_INSENSITIVE);
  /** E2B's ready wait after a Dockerfile's CMD or ENTRYPOINT. */
  static final Duration START_WAIT = Duration.ofSeconds(20);

  private DockerfileSteps() {}

  private record Instruction(int line, String keyword, String rest) {}

  /** A CMD or ENTRYPOINT: its command as one shell line, and whether it was the exec (JSON) form. */
  private record Command(String shell, boolean exec) {}

  /** Parses a Dockerfile file, its folder the context directory. */
  static Template parse(Path dockerfile) {
    Path file = dockerfile.toAbsolutePath().normalize();
    try {
      return parse(java.nio.file.Files.readString(file), file.getParent());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("read " + dockerfile, e);
    }
  }

  static Template parse(String text, Path contextDir) {
    List<Instruction> instructions = instructions(text);
    Instruction from = null;
    for (Instruction i : instructions) {
      if (i.keyword().equals("FROM")) {
        if (from != null) {
          throw refused(i, "several stages (a second FROM) are not supported: use one FROM");
        }
        from = i;
      }
    }
    if (from == null) {
      throw new IllegalArgumentException("the Dockerfile has no FROM instruction");
    }
    Template t = Template.fromImage(baseImage(from)).withContextDir(contextDir).setUser("root").setWorkdir("/");
    boolean userSet = false;
    boolean workdirSet = false;
    Command cmd = null;
    Command entrypoint = null;
    for (Instruction i : instructions) {
      try {
        switch (i.keyword()) {
          case "FROM", "EXPOSE", "VOLUME" -> {
            // FROM is the base; EXPOSE and VOLUME mean nothing to a sandbox (E2B skips them too)
          }
          case "RUN" -> t = t.runCmd(run(i));
          case "COPY", "ADD" -> t = copy(t, i);
          case "ENV", "ARG" -> t = t.setEnvs(env(i));
          case "WORKDIR" -> {
            t = t.setWorkdir(plain(i, unquote(i.rest())));
            workdirSet = true;
          }
          case "USER" -> {
            t = t.setUser(user(i, i.rest().strip()));
            userSet = true;
          }
          case "CMD" -> cmd = command(i);
          case "ENTRYPOINT" -> entrypoint = command(i);
          default -> throw refused(i, i.keyword() + " is not supported (the instructions taken are FROM, RUN, COPY, ADD, ENV, ARG,"
              + " WORKDIR, USER, CMD and ENTRYPOINT; EXPOSE and VOLUME are skipped)");
        }
      } catch (IllegalArgumentException e) {
        if (e.getMessage() != null && e.getMessage().startsWith("Dockerfile line ")) {
          throw e;
        }
        throw refused(i, e.getMessage());
      }
    }
    if (!userSet) {
      t = t.setUser("user");
    }
    if (!workdirSet) {
      t = t.setWorkdir("/home/user");
    }
    String start = start(entrypoint, cmd);
    return start == null ? t : t.setStartCmd(start, ReadyCmd.waitForTimeout(START_WAIT));
  }

  /** The logical instructions: comments and blank lines dropped, continuation lines joined. */
  private static List<Instruction> instructions(String text) {
    String[] lines = text.split("\r?\n", -1);
    char escape = '\\';
    int first = 0;
    // parser directives: comment lines of the form '# name=value' before anything else
    for (; first < lines.length; first++) {
      String l = lines[first].strip();
      var m = DIRECTIVE.matcher(l);
      if (!m.matches()) {
        break;
      }
      if (m.group(1).equalsIgnoreCase("escape")) {
        if (!m.group(2).equals("\\") && !m.group(2).equals("`")) {
          throw new IllegalArgumentException("Dockerfile line " + (first + 1) + ": the escape character must be \\ or `");
        }
        escape = m.group(2).charAt(0);
      }
    }
    List<Instruction> out = new ArrayList<>();
    StringBuilder current = null;
    int startLine = 0;
    for (int n = first; n < lines.length; n++) {
      String raw = lines[n];
      String stripped = raw.strip();
      if (stripped.startsWith("#") || stripped.isEmpty()) {
        continue; // a comment or an empty line, also inside a continued instruction
      }
      if (current == null) {
        current = new StringBuilder();
        startLine = n + 1;
      }
      String trailing = raw.stripTrailing();
      if (!trailing.isEmpty() && trailing.charAt(trailing.length() - 1) == escape) {
        current.append(trailing, 0, trailing.length() - 1);
        continue;
      }
      current.append(raw);
      out.add(instruction(startLine, current.toString()));
      current = null;
    }
    if (current != null && !current.toString().isBlank()) {
      out.add(instruction(startLine, current.toString()));
    }
    return out;
  }

  private static Instruction instruction(int line, String text) {
    String s = text.strip();
    int space = 0;
    while (space < s.length() && !Character.isWhitespace(s.charAt(space))) {
      space++;
    }
    Instruction i = new Instruction(line, s.substring(0, space).toUpperCase(Locale.ROOT), s.substring(space).strip());
    if (HEREDOC.matcher(i.rest()).find()) {
      throw refused(i, "heredocs are not supported: write the lines as a RUN command or COPY a file");
    }
    return i;
  }

  private static String baseImage(Instruction from) {
    List<String> words = List.of(from.rest().split("\\s+"));
    if (from.rest().isEmpty() || words.get(0).startsWith("--")) {
      throw refused(from, from.rest().isEmpty() ? "FROM names no image" : "FROM flags (" + words.get(0) + ") are not supported");
    }
    if (!(words.size() == 1 || (words.size() == 3 && words.get(1).equalsIgnoreCase("AS")))) {
      throw refused(from, "FROM takes an image and an optional 'AS name', got '" + from.rest() + "'");
    }
    return plain(from, words.get(0));
  }

  private static String run(Instruction i) {
    if (i.rest().startsWith("--")) {
      throw refused(i, "RUN flags (" + i.rest().split("\\s+")[0] + ") are not supported");
    }
    List<String> exec = execForm(i);
    if (exec != null) {
      return String.join(" ", exec.stream().map(Checks::word).toList());
    }
    return i.rest();
  }

  private static Template copy(Template t, Instruction i) {
    String rest = i.rest();
    CopyOptions options = CopyOptions.defaults();
    while (rest.startsWith("--")) {
      String[] split = rest.split("\\s+", 2);
      String flag = split[0];
      rest = split.length > 1 ? split[1] : "";
      String name = flag.contains("=") ? flag.substring(2, flag.indexOf('=')) : flag.substring(2);
      String value = flag.contains("=") ? flag.substring(flag.indexOf('=') + 1) : "";
      switch (name) {
        case "chown" -> options = options.withUser(user(i, value));
        case "chmod" -> {
          if (!value.matches("^[0-7]{1,4}$")) {
            throw refused(i, "--chmod takes an octal mode, got '" + value + "'");
          }
          options = options.withMode(Integer.parseInt(value, 8));
        }
        case "link" -> {
          // how Docker stores the layer; the files placed are the same
        }
        case "from" -> throw refused(i, "COPY --from (another stage or image) is not supported");
        default -> throw refused(i, i.keyword() + " flag --" + name + " is not supported");
      }
    }
    List<String> exec = execForm(new Instruction(i.line(), i.keyword(), rest));
    List<String> args = exec != null ? exec : List.of(rest.split("\\s+"));
    if (args.size() < 2) {
      throw refused(i, i.keyword() + " takes one or more sources and a destination");
    }
    String dest = plain(i, args.get(args.size() - 1));
    for (String src : args.subList(0, args.size() - 1)) {
      if (src.contains("://") || src.startsWith("git@")) {
        throw refused(i, i.keyword() + " of a URL (" + src + ") is not supported: the builder copies local files only");
      }
      if (i.keyword().equals("ADD") && ARCHIVE.matcher(src).matches()) {
        throw refused(i, "ADD of an archive (" + src + ") is not supported: Docker would unpack it, the builder copies it as it is;"
            + " COPY it and unpack it in a RUN");
      }
      t = t.copy(plain(i, src), dest, options);
    }
    return t;
  }

  private static Map<String, String> env(Instruction i) {
    Map<String, String> out = new LinkedHashMap<>();
    String rest = i.rest();
    if (rest.isEmpty()) {
      throw refused(i, i.keyword() + " names no variable");
    }
    int firstSpace = rest.split("\\s+")[0].length();
    if (i.keyword().equals("ENV") && !rest.substring(0, firstSpace).contains("=")) {
      // the old form: ENV name value, the rest of the line the value
      out.put(rest.substring(0, firstSpace), plain(i, unquote(rest.substring(firstSpace).strip())));
      return out;
    }
    for (String word : words(i, rest)) {
      int eq = word.indexOf('=');
      if (eq == 0) {
        throw refused(i, "'" + word + "' names no variable");
      }
      if (eq < 0) {
        if (i.keyword().equals("ENV")) {
          throw refused(i, "ENV '" + word + "' has no value");
        }
        out.put(word, ""); // an ARG without a default: empty, as E2B's SDK sets it
      } else {
        out.put(word.substring(0, eq), word.substring(eq + 1));
      }
    }
    return out;
  }

  /** Words as Docker's ENV splits them: spaces separate, quotes group, a backslash escapes; {@code $} is refused. */
  private static List<String> words(Instruction i, String s) {
    List<String> out = new ArrayList<>();
    StringBuilder w = null;
    char quote = 0;
    for (int k = 0; k < s.length(); k++) {
      char c = s.charAt(k);
      if (quote == 0 && Character.isWhitespace(c)) {
        if (w != null) {
          out.add(w.toString());
          w = null;
        }
        continue;
      }
      if (w == null) {
        w = new StringBuilder();
      }
      if (c == '\\' && quote != '\'' && k + 1 < s.length()) {
        w.append(s.charAt(++k));
      } else if (c == '$' && quote != '\'') {
        throw substitution(i);
      } else if ((c == '"' || c == '\'') && (quote == 0 || quote == c)) {
        quote = quote == 0 ? c : 0;
      } else {
        w.append(c);
      }
    }
    if (quote != 0) {
      throw refused(i, "a quote is not closed");
    }
    if (w != null) {
      out.add(w.toString());
    }
    return out;
  }

  private static String unquote(String s) {
    if (s.length() >= 2 && (s.charAt(0) == '"' || s.charAt(0) == '\'') && s.charAt(s.length() - 1) == s.charAt(0)) {
      return s.substring(1, s.length() - 1);
    }
    return s;
  }

  /** A value taken literally: an unescaped {@code $} would be substituted by Docker, which this reader does not do. */
  private static String plain(Instruction i, String s) {
    if (s.contains("$")) {
      throw substitution(i);
    }
    if (s.isBlank()) {
      throw refused(i, i.keyword() + " has an empty argument");
    }
    return s;
  }

  private static String user(Instruction i, String spec) {
    String u = plain(i, spec);
    int colon = u.indexOf(':');
    if (colon >= 0 && !u.substring(colon + 1).equals(u.substring(0, colon))) {
      throw refused(i, "a group ('" + u + "') is not supported: the user's own group is used");
    }
    return colon >= 0 ? u.substring(0, colon) : u;
  }

  private static Command command(Instruction i) {
    List<String> exec = execForm(i);
    if (exec != null) {
      if (exec.isEmpty()) {
        throw refused(i, i.keyword() + " is an empty list");
      }
      return new Command(String.join(" ", exec.stream().map(Checks::word).toList()), true);
    }
    if (i.rest().isEmpty()) {
      throw refused(i, i.keyword() + " has no command");
    }
    return new Command(i.rest(), false);
  }

  /** Docker's rule: an exec-form ENTRYPOINT takes CMD as its arguments; a shell-form one ignores CMD. */
  private static @Nullable String start(@Nullable Command entrypoint, @Nullable Command cmd) {
    if (entrypoint == null) {
      return cmd == null ? null : cmd.shell();
    }
    if (!entrypoint.exec() || cmd == null) {
      return entrypoint.shell();
    }
    return entrypoint.shell() + " " + (cmd.exec() ? cmd.shell() : "/bin/sh -c " + Checks.shellQuote(cmd.shell()));
  }

  /** The JSON-array form's strings, or null when the text is not a JSON array (the shell form). */
  private static @Nullable List<String> execForm(Instruction i) {
    String s = i.rest();
    if (!s.startsWith("[")) {
      return null;
    }
    JsonNode node;
    try {
      node = JSON.readTree(s);
    } catch (java.io.IOException notJson) {
      return null; // Docker reads it as the shell form then
    }
    if (node == null || !node.isArray()) {
      return null;
    }
    List<String> out = new ArrayList<>();
    for (JsonNode e : node) {
      if (!e.isTextual()) {
        throw refused(i, "the JSON form holds strings only");
      }
      out.add(e.asText());
    }
    return out;
  }

  private static IllegalArgumentException substitution(Instruction i) {
    return refused(i, "variable substitution ($) is not supported outside RUN: write the value out, or use it in a RUN command");
  }

  private static IllegalArgumentException refused(Instruction i, @Nullable String why) {
    return new IllegalArgumentException("Dockerfile line " + i.line() + ": " + why);
  }
}
