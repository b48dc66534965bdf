package io.sandboxes.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.Sandbox;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.junit.E2BSandbox;
import io.sandboxes.langchain4j.SandboxTools;
import io.sandboxes.local.LocalServer;
import io.sandboxes.mcp.SandboxMcpServer;
import io.sandboxes.springai.SandboxSpringTools;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.zip.ZipFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Our jars and POMs as this build resolved them from the local repository (what {@code ./mvnw
 * install} put there): a user's compile class path gets our API and nothing it did not ask for.
 * sandboxes-core and sandboxes-local carry what they use inside renamed under
 * {@code io.sandboxes.internal.shaded}; the POMs name our artifacts, SLF4J's API, annotations
 * (JSpecify's, Error Prone's), and for an agent module the framework it is for. (it/coexist runs
 * projects that have their own Jackson, Testcontainers, Spring Boot or LangChain4j beside them.)
 */
class PublishedJarsTest {

  /** What each artifact's installed POM may pass on (compile and runtime scope). */
  private static final Map<Class<?>, List<String>> PASSED_ON = Map.of(
      Sandbox.class, List.of("org.jspecify:jspecify"),
      LocalServer.class, List.of("io.sandboxes:sandboxes-core", "org.jspecify:jspecify", "org.slf4j:slf4j-api"),
      Sandboxes.class, List.of("com.google.errorprone:error_prone_annotations", "io.sandboxes:sandboxes-core",
          "org.jspecify:jspecify"),
      E2BSandbox.class, List.of("io.sandboxes:sandboxes-dsl", "org.jspecify:jspecify"),
      // the agent modules: the DSL and the framework each is for (MCP's HTTP transport runs on Jetty)
      SandboxTools.class, List.of("dev.langchain4j:langchain4j", "io.sandboxes:sandboxes-dsl", "org.jspecify:jspecify"),
      SandboxSpringTools.class, List.of("io.sandboxes:sandboxes-dsl", "org.jspecify:jspecify",
          "org.springframework.ai:spring-ai-model", "org.springframework.boot:spring-boot-autoconfigure"),
      SandboxMcpServer.class, List.of("io.modelcontextprotocol.sdk:mcp", "io.sandboxes:sandboxes-dsl",
          "io.sandboxes:sandboxes-local", "org.eclipse.jetty.ee11:jetty-ee11-servlet", "org.jspecify:jspecify"));

  /**
   * Packages our jars may refer to without carrying them: optional parts of what they carry that
   * nothing of ours reaches (JNA only for Windows named pipes and JDKs before 16; Jetty's JMX;
   * Testcontainers' Jib support; a TLS provider; commons-compress's Brotli, Zstandard, XZ and
   * Pack200 codecs, where tar needs none), and annotations, which the JVM does not need at run time.
   */
  private static final List<String> ABSENT_ON_PURPOSE = List.of("com.sun.jna", "io.sandboxes.internal.shaded.jetty.jmx",
      "com.google.cloud.tools.jib", "org.conscrypt", "org.brotli.dec", "com.github.luben.zstd", "org.tukaani.xz",
      "org.objectweb.asm", "javax.annotation", "com.google.j2objc.annotations", "org.immutables.value");

  @Test
  void ourPomsPassOnOnlyWhatTheyAreFor() throws Exception {
    for (var entry : PASSED_ON.entrySet()) {
      Path pom = pomOf(entry.getKey());
      assertThat(compileDependencies(pom)).as("what " + pom.getFileName() + " passes on").isEqualTo(entry.getValue());
    }
  }

  @Test
  void ourJarsCarryOnlyClassesUnderIoSandboxes() throws Exception {
    for (Class<?> type : List.of(Sandbox.class, LocalServer.class)) {
      Path jar = jarOf(type);
      List<String> foreign = new ArrayList<>();
      try (ZipFile zip = new ZipFile(jar.toFile())) {
        zip.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class"))
            .map(n -> n.replaceFirst("^META-INF/versions/\\d+/", ""))
            .filter(n -> !n.startsWith("io/sandboxes/") && !n.equals("module-info.class"))
            .forEach(foreign::add);
      }
      assertThat(foreign).as("classes in " + jar.getFileName() + " outside io/sandboxes (a library carried without renaming)")
          .isEmpty();
    }
  }

  @Test
  void everyClassOurJarsReferToIsInThemOrInWhatTheyPassOn() throws Exception {
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
    String classPath = String.join(java.io.File.pathSeparator, jarOf(Sandbox.class).toString(),
        jarOf(org.slf4j.Logger.class).toString(), jarOf(org.jspecify.annotations.Nullable.class).toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
    int status = jdeps.run(print, print, "--multi-release", "21", "--missing-deps", "-cp", classPath,
        jarOf(Sandbox.class).toString(), jarOf(LocalServer.class).toString());
    String report = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as(report).isZero();
    // lines like "   a.b.C -> x.y.Z   not found"
    Matcher m = Pattern.compile("->\\s+(\\S+)\\s+not found").matcher(report);
    TreeSet<String> missing = new TreeSet<>();
    while (m.find()) {
      String name = m.group(1);
      if (ABSENT_ON_PURPOSE.stream().noneMatch(p -> name.startsWith(p + "."))) {
        missing.add(name);
      }
    }
    assertThat(missing).as("classes sandboxes-core and sandboxes-local refer to that neither they nor their POMs' "
        + "dependencies have (a reference left unrenamed, or a library left out)").isEmpty();
  }

  private static Path jarOf(Class<?> type) throws URISyntaxException {
    Path jar = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    assertThat(jar.getFileName().toString()).as(type.getName() + "'s jar").endsWith(".jar");
    return jar;
  }

  /** The POM installed beside a jar of the local repository. */
  private static Path pomOf(Class<?> type) throws URISyntaxException {
    Path jar = jarOf(type);
    Path pom = jar.resolveSibling(jar.getFileName().toString().replaceFirst("\\.jar$", ".pom"));
    assertThat(pom).as("the POM beside " + jar).isRegularFile();
    return pom;
  }

  /** groupId:artifactId of the compile and runtime dependencies a POM names, sorted. */
  private static List<String> compileDependencies(Path pom) throws Exception {
    Element project;
    try (var in = Files.newInputStream(pom)) {
      project = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in).getDocumentElement();
    } catch (IOException e) {
      throw new AssertionError("cannot read " + pom, e);
    }
    TreeSet<String> out = new TreeSet<>();
    for (Element dependencies : children(project, "dependencies")) {
      for (Element d : children(dependencies, "dependency")) {
        String scope = text(d, "scope");
        if ((scope.isEmpty() || scope.equals("compile") || scope.equals("runtime")) && !text(d, "optional").equals("true")) {
          out.add(text(d, "groupId") + ":" + text(d, "artifactId"));
        }
      }
    }
    return List.copyOf(out);
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> out = new ArrayList<>();
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      if (nodes.item(i) instanceof Element e && e.getTagName().equals(name)) {
        out.add(e);
      }
    }
    return out;
  }

  private static String text(Element parent, String name) {
    List<Element> found = children(parent, name);
    return found.isEmpty() ? "" : found.get(0).getTextContent().strip();
  }
}
