package io.sandboxes.e2b;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The glob patterns of a COPY's source and of the files a build ignores, matched as E2B's SDK
 * matches them (its glob library, dot files included): paths are {@code /}-separated and relative
 * to the context directory; {@code *} and {@code ?} stay within one path segment, a {@code **}
 * segment spans any number of them (none included), {@code [...]} is a character class
 * ({@code [!...]} or {@code [^...]} negated), {@code {a,b}} an alternative, and {@code \} quotes
 * the next character. An ignore pattern drops each path it matches, written with or without a
 * trailing {@code /}; what is under a matched folder is dropped only when the pattern ends in
 * {@code /**}, as with E2B.
 */
final class CopyGlob {
  private final Pattern regex;

  private CopyGlob(String glob) {
    this.regex = Pattern.compile(toRegex(glob), Pattern.DOTALL);
  }

  static CopyGlob of(String glob) {
    return new CopyGlob(glob);
  }

  /** Whether a COPY source is a pattern rather than a path. */
  static boolean isGlob(String src) {
    return src.matches("(?s).*[*?\\[].*") || src.matches("(?s).*\\{[^}]*,[^}]*}.*");
  }

  boolean matches(String relative) {
    return regex.matcher(relative).matches();
  }

  /** Whether any of the ignore patterns drops the path (relative to the context, {@code /}-separated). */
  static boolean ignored(List<CopyGlob> ignore, String relative) {
    for (CopyGlob g : ignore) {
      if (g.matches(relative) || g.matches(relative + "/")) {
        return true;
      }
    }
    return false;
  }

  /**
   * The patterns a build ignores, as E2B's SDK takes them: the template's own, then the lines of
   * the context directory's {@code .dockerignore} (trimmed, blank lines and {@code #} comments left
   * out).
   */
  static List<CopyGlob> ignorePatterns(List<String> own, Path context) {
    List<String> all = new ArrayList<>(own);
    Path file = context.resolve(".dockerignore");
    if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
      try {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          String l = line.strip();
          if (!l.isEmpty() && !l.startsWith("#")) {
            if (l.startsWith("!")) {
              throw new IllegalArgumentException("the context's .dockerignore has '" + l + "': a negated pattern, which this client"
                  + " does not take (E2B's SDK reads .dockerignore as plain ignore patterns)");
            }
            all.add(l);
          }
        }
      } catch (IOException e) {
        throw new IllegalArgumentException("the context's .dockerignore cannot be read: " + e, e);
      }
    }
    return all.stream().map(CopyGlob::of).toList();
  }

  /** The regular expression of a glob, segment by segment ({@code .} segments and repeated {@code /} left out). */
  private static String toRegex(String glob) {
    List<String> segments = new ArrayList<>();
    String[] parts = glob.split("/", -1);
    for (int i = 0; i < parts.length; i++) {
      boolean last = i == parts.length - 1;
      if (parts[i].equals(".") || (parts[i].isEmpty() && !last && i > 0)) {
        continue;
      }
      segments.add(parts[i]);
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < segments.size(); i++) {
      String seg = segments.get(i);
      boolean last = i == segments.size() - 1;
      if (seg.equals("**")) {
        if (!last) {
          out.append("(?:[^/]+/)*");
        } else if (out.isEmpty()) {
          out.append(".*");
        } else {
          out.setLength(out.length() - 1); // the '/' before it: a/** is a itself and all under it
          out.append("(?:/.*)?");
        }
        continue;
      }
      out.append(seg.equals("*") ? "[^/]+" : segment(seg));
      if (!last) {
        out.append('/');
      }
    }
    return out.toString();
  }

  private static String segment(String seg) {
    StringBuilder out = new StringBuilder();
    int braces = 0;
    for (int i = 0; i < seg.length(); i++) {
      char c = seg.charAt(i);
      switch (c) {
        case '*' -> out.append("[^/]*");
        case '?' -> out.append("[^/]");
        case '\\' -> {
          if (i + 1 < seg.length()) {
            out.append(Pattern.quote(String.valueOf(seg.charAt(++i))));
          } else {
            out.append("\\\\");
          }
        }
        case '[' -> {
          int close = seg.indexOf(']', i + 2);
          if (close < 0) {
            out.append("\\[");
          } else {
            String body = seg.substring(i + 1, close);
            boolean negated = body.startsWith("!") || body.startsWith("^");
            String members = (negated ? body.substring(1) : body).replace("\\", "\\\\").replace("[", "\\[").replace("&", "\\&");
            out.append(negated ? "[^/" : "[").append(members).append(']');
            i = close;
          }
        }
        case '{' -> {
          if (seg.indexOf('}', i) > 0 && seg.substring(i, seg.indexOf('}', i)).contains(",")) {
            braces++;
            out.append("(?:");
          } else {
            out.append("\\{");
          }
        }
        case ',' -> out.append(braces > 0 ? "|" : ",");
        case '}' -> {
          if (braces > 0) {
            braces--;
            out.append(')');
          } else {
            out.append("\\}");
          }
        }
        default -> out.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return out.toString();
  }
}
