package io.sandboxes.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * docs/e2b-parity.md says what its table says: the counts in its opening paragraph are counted
 * here from the rows, and every test a row names (in its Test or Local server cell) is a method of
 * a test class of this repository. Rows are edited by many hands; this keeps the summary true.
 */
class ParityDocTest {
  private static final Path ROOT = Path.of("..");
  private static final Path DOC = ROOT.resolve("docs/e2b-parity.md");
  private static final Pattern TEST_NAME = Pattern.compile("\\b([A-Z][A-Za-z0-9_]*)#([a-z][A-Za-z0-9_]*)");
  private static final Set<String> SKIPPED_FOLDERS = Set.of("target", ".git", "node_modules", ".mvn");

  /** One row of the table: its line, and its five cells (group, JS, Java, local server, test). */
  record Row(int line, String group, String js, String java, String local, String test) {
    boolean partial() {
      return java.startsWith("partly");
    }

    boolean missing() {
      return java.startsWith("not offered");
    }

    boolean full() {
      return !partial() && !missing();
    }
  }

  static List<Row> rows(List<String> lines) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i).strip();
      if (!l.startsWith("|") || l.startsWith("|---") || l.startsWith("| Group |")) {
        continue;
      }
      List<String> cells = cells(l);
      assertThat(cells).as("the cells of line %d of the parity table: %s", i + 1, l).hasSize(5);
      rows.add(new Row(i + 1, cells.get(0), cells.get(1), cells.get(2), cells.get(3), cells.get(4)));
    }
    return rows;
  }

  /** A table line's cells: split at each '|' that is not inside a `code` span. */
  static List<String> cells(String line) {
    List<String> cells = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    boolean code = false;
    for (char c : line.substring(1, line.length() - 1).toCharArray()) {
      if (c == '`') {
        code = !code;
      }
      if (c == '|' && !code) {
        cells.add(cell.toString().strip());
        cell.setLength(0);
      } else {
        cell.append(c);
      }
    }
    cells.add(cell.toString().strip());
    return cells;
  }

  @Test
  @DisplayName("the parity table's opening paragraph gives the counts of its rows")
  void headerCountsMatchTheTable() throws IOException {
    String doc = Files.readString(DOC);
    List<Row> rows = rows(doc.lines().toList());
    long full = rows.stream().filter(Row::full).count();
    long partial = rows.stream().filter(Row::partial).count();
    List<Row> missing = rows.stream().filter(Row::missing).toList();
    long git = missing.stream().filter(r -> r.group().equals("git")).count();
    long cloud = missing.stream().filter(r -> !r.group().equals("git"))
        .filter(r -> r.java().contains("cloud-only") || r.local().contains("cloud-only")).count();
    long onPurpose = missing.stream().filter(r -> r.java().startsWith("not offered, because")).count();
    long serverFully = rows.stream().filter(r -> r.local().startsWith("yes")).count();
    long serverPartly = rows.stream().filter(r -> r.local().startsWith("partly")).count();
    long clientSide = rows.stream().filter(r -> r.local().startsWith("client-side")).count();

    String header = doc.substring(0, doc.indexOf("\n## ")).replaceAll("\\s+", " ");
    List<String> expected = List.of(
        "has **" + rows.size() + "** public capabilities",
        "offers **" + full + "** fully, **" + partial + "** partly, and **" + missing.size() + "** not at all. Of those "
            + missing.size() + ", " + cloud + " belong to parts of E2B's cloud",
        (git > 0 ? git + " are the `sandbox.git` helpers, " : "") + "and " + onPurpose + " are left out on purpose",
        "the other " + (missing.size() - git - cloud - onPurpose) + " are the gaps",
        "answers what **" + (serverFully + serverPartly) + "** rows need (" + serverFully + " fully, " + serverPartly
            + " partly); " + clientSide + " rows need no server at all");
    assertThat(header).as("the opening paragraph of docs/e2b-parity.md").contains(expected);
  }

  @Test
  @DisplayName("every test a row of the parity table names is a method of a test class of this repository")
  void namedTestsExist() throws IOException {
    Map<String, List<String>> testSources = testSources();
    List<String> absent = new ArrayList<>();
    int named = 0;
    for (Row row : rows(Files.readAllLines(DOC))) {
      for (String cell : List.of(row.local(), row.test())) {
        // a `Class#method` in code quotes is a Java name, not a test
        Matcher m = TEST_NAME.matcher(cell.replaceAll("`[^`]*`", ""));
        while (m.find()) {
          named++;
          String method = m.group(2);
          Pattern declared = Pattern.compile("\\b" + method + "\\s*\\(");
          List<String> sources = testSources.getOrDefault(m.group(1), List.of());
          if (sources.stream().noneMatch(s -> declared.matcher(s).find())) {
            absent.add("line " + row.line() + ": " + m.group());
          }
        }
      }
    }
    assertThat(named).as("tests named in the table").isGreaterThan(100);
    assertThat(absent).as("tests named in docs/e2b-parity.md that no test source declares").isEmpty();
  }

  /** The text of every test source file, by simple class name (one name may be in several modules). */
  private static Map<String, List<String>> testSources() throws IOException {
    Map<String, List<String>> sources = new HashMap<>();
    Files.walkFileTree(ROOT, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
        return dir.getFileName() != null && SKIPPED_FOLDERS.contains(dir.getFileName().toString())
            ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        String name = file.getFileName().toString();
        if (name.endsWith(".java") && file.toString().replace('\\', '/').contains("/src/test/java/")) {
          sources.computeIfAbsent(name.substring(0, name.length() - 5), k -> new ArrayList<>()).add(Files.readString(file));
        }
        return FileVisitResult.CONTINUE;
      }
    });
    return sources;
  }
}
