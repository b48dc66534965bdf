import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the README's Java snippets into test sources of the consumer project, so that what the
 * README shows is exactly what this build compiles and runs: there is no copy to keep in step.
 * Run by the build ({@code java ReadmeSnippets.java README.md <output folder>}).
 *
 * <p>A snippet is a {@code ```java} block right after a {@code <!-- snippet:NAME -->} line. One
 * that declares a type (the README's test classes) becomes a member of {@code ReadmeTestSnippets},
 * listed in its {@code CLASSES}; any other is a method body in {@code ReadmeCodeSnippets}, listed
 * by name in its {@code ALL}, with a {@code PrintStream out} to print to. The imports are every
 * package of the public API on demand, so a type renamed in both the API and the README needs no
 * edit here. Anything the generator cannot read fails the build.
 */
public final class ReadmeSnippets {
  private static final String PACKAGE = "io.sandboxes.consumer";
  /**
   * What a snippet may use without an import of its own: every package of the public API (no two
   * of its public types share a simple name, which PublicNamesTest in junit-extension guards), the
   * JDK packages the snippets use, JUnit Jupiter's API, its {@code assertEquals} (the JUnit
   * snippet's only assertion, so that it needs nothing but JUnit) and AssertJ's assertions.
   */
  private static final String IMPORTS = """
      import static org.assertj.core.api.Assertions.*;
      import static org.junit.jupiter.api.Assertions.assertEquals;

      import io.sandboxes.*;
      import io.sandboxes.dsl.*;
      import io.sandboxes.e2b.*;
      import io.sandboxes.junit.*;
      import io.sandboxes.langchain4j.*;
      import io.sandboxes.springai.*;
      import io.sandboxes.mcp.*;
      import io.sandboxes.template.*;
      import org.springframework.ai.chat.memory.ChatMemory;
      import org.springframework.ai.chat.model.ToolContext;
      import java.io.*;
      import java.nio.file.*;
      import java.time.*;
      import java.util.*;
      import org.junit.jupiter.api.*;
      """;
  private static final Pattern SNIPPET = Pattern.compile("<!-- snippet:(\\S+) -->\\n```java\\n(.*?)\\n```", Pattern.DOTALL);
  private static final Pattern MARKER = Pattern.compile("<!-- snippet:");
  private static final Pattern TYPE = Pattern.compile(
      "^(?:(?:public|protected|private|static|final|abstract|sealed)\\s+)*(?:class|record|interface|enum)\\s+([A-Za-z_$][\\w$]*)");

  private ReadmeSnippets() {}

  record Snippet(String name, int line, String code) {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: java ReadmeSnippets.java <README.md> <output folder>");
    }
    Path readme = Path.of(args[0]).toAbsolutePath().normalize();
    Path out = Path.of(args[1]).resolve(PACKAGE.replace('.', '/'));
    String text = Files.readString(readme).replace("\r\n", "\n");

    List<Snippet> code = new ArrayList<>();
    List<Snippet> types = new ArrayList<>();
    Set<String> names = new LinkedHashSet<>();
    Matcher m = SNIPPET.matcher(text);
    int found = 0;
    while (m.find()) {
      found++;
      Snippet s = new Snippet(m.group(1), lineOf(text, m.start(2)), m.group(2));
      if (!s.name().matches("[A-Za-z0-9_-]+")) {
        fail(readme, s.line(), "a snippet name is letters, digits, '-' and '_', not " + s.name());
      }
      if (!names.add(s.name())) {
        fail(readme, s.line(), "a second snippet named " + s.name());
      }
      (typeNames(s).isEmpty() ? code : types).add(s);
    }
    long markers = MARKER.matcher(text).results().count();
    if (markers != found) {
      fail(readme, 0, markers + " snippet markers but " + found + " of them are followed by a ```java block");
    }
    if (found == 0) {
      fail(readme, 0, "no snippets (<!-- snippet:NAME --> followed by a ```java block)");
    }

    Files.createDirectories(out);
    Files.writeString(out.resolve("ReadmeCodeSnippets.java"), codeSource(readme, code), StandardCharsets.UTF_8);
    Files.writeString(out.resolve("ReadmeTestSnippets.java"), typeSource(readme, types), StandardCharsets.UTF_8);
    System.out.println("README snippets: " + code.size() + " code (" + String.join(", ", code.stream().map(Snippet::name).toList())
        + "), " + types.size() + " test classes (" + String.join(", ", types.stream().map(Snippet::name).toList())
        + ") -> " + out);
  }

  private static String codeSource(Path readme, List<Snippet> snippets) {
    StringBuilder b = header(readme);
    b.append("""
        /** The README's code snippets, each a method printing to {@code out}, in README order in {@link #ALL}. */
        final class ReadmeCodeSnippets {
          private ReadmeCodeSnippets() {}

          /** A snippet, given where to print. */
          interface Snippet {
            void run(PrintStream out) throws Exception;
          }

          /** Every code snippet of the README, by name. */
          static final Map<String, Snippet> ALL;

          static {
            Map<String, Snippet> all = new LinkedHashMap<>();
        """);
    for (Snippet s : snippets) {
      b.append("    all.put(\"").append(s.name()).append("\", ReadmeCodeSnippets::").append(method(s)).append(");\n");
    }
    b.append("    ALL = Collections.unmodifiableMap(all);\n  }\n");
    for (Snippet s : snippets) {
      b.append("\n  // README.md line ").append(s.line()).append(": snippet:").append(s.name()).append('\n');
      b.append("  static void ").append(method(s)).append("(PrintStream out) throws Exception {\n");
      b.append(indent(s.code(), "    "));
      b.append("  }\n");
    }
    return b.append("}\n").toString();
  }

  private static String typeSource(Path readme, List<Snippet> snippets) {
    StringBuilder b = header(readme);
    b.append("""
        /** The README's test classes, nested here as the README shows them, and listed in {@link #CLASSES}. */
        final class ReadmeTestSnippets {
          private ReadmeTestSnippets() {}

        """);
    b.append("  /** Every test class the README declares, in README order. */\n");
    b.append("  static final List<Class<?>> CLASSES = List.of(");
    b.append(String.join(", ", snippets.stream().flatMap(s -> typeNames(s).stream()).map(n -> n + ".class").toList()));
    b.append(");\n");
    for (Snippet s : snippets) {
      b.append("\n  // README.md line ").append(s.line()).append(": snippet:").append(s.name()).append('\n');
      b.append(indent(s.code(), "  "));
    }
    return b.append("}\n").toString();
  }

  private static StringBuilder header(Path readme) {
    return new StringBuilder("// Generated from ").append(readme.getFileName())
        .append(" by it/consumer/src/build/ReadmeSnippets.java. Do not edit: edit the README.\n")
        .append("package ").append(PACKAGE).append(";\n\n").append(IMPORTS).append('\n');
  }

  /** The types a snippet declares at its own top level (lines with the snippet's least indentation). */
  private static List<String> typeNames(Snippet s) {
    List<String> lines = s.code().lines().filter(l -> !l.isBlank()).toList();
    int base = lines.stream().mapToInt(ReadmeSnippets::indentOf).min().orElse(0);
    List<String> out = new ArrayList<>();
    for (String l : lines) {
      if (indentOf(l) == base) {
        Matcher t = TYPE.matcher(l.strip());
        if (t.find()) {
          out.add(t.group(1));
        }
      }
    }
    return out;
  }

  private static int indentOf(String line) {
    return line.length() - line.stripLeading().length();
  }

  private static String method(Snippet s) {
    String id = s.name().replaceAll("[^A-Za-z0-9_]", "_");
    return Character.isJavaIdentifierStart(id.charAt(0)) ? id : "_" + id;
  }

  private static String indent(String code, String by) {
    StringBuilder b = new StringBuilder();
    code.lines().forEach(l -> b.append(l.isBlank() ? "" : by + l).append('\n'));
    return b.toString();
  }

  private static int lineOf(String text, int offset) {
    int line = 1;
    for (int i = 0; i < offset; i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  private static void fail(Path readme, int line, String what) {
    System.err.println(readme + (line > 0 ? ":" + line : "") + ": " + what);
    System.exit(1);
  }
}
