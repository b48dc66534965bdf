package io.sandboxes.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** The BOM stays in step with the build: same version, every library module, nothing else. */
class BomTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  @DisplayName("the BOM has the project's version and manages every library module at that version")
  void bomMatchesModules() throws Exception {
    Document root = parse(ROOT.resolve("pom.xml"));
    Document bom = parse(ROOT.resolve("bom/pom.xml"));
    assertThat(child(bom.getDocumentElement(), "version")).isEqualTo(child(root.getDocumentElement(), "version"));

    List<String> libraries = new ArrayList<>();
    for (Element module : children(child(root.getDocumentElement(), "modules", Element.class), "module")) {
      String dir = module.getTextContent().strip();
      if (dir.equals("bom") || dir.equals("examples")) {
        continue; // the BOM itself, and programs that are not published
      }
      libraries.add(child(parse(ROOT.resolve(dir).resolve("pom.xml")).getDocumentElement(), "artifactId"));
    }
    assertThat(libraries).isNotEmpty();

    Element managed = child(child(bom.getDocumentElement(), "dependencyManagement", Element.class), "dependencies", Element.class);
    List<String> inBom = new ArrayList<>();
    for (Element dep : children(managed, "dependency")) {
      assertThat(child(dep, "groupId")).isEqualTo("io.sandboxes");
      assertThat(child(dep, "version")).isEqualTo("${project.version}");
      inBom.add(child(dep, "artifactId"));
    }
    assertThat(inBom).containsExactlyInAnyOrderElementsOf(libraries);
  }

  private static Document parse(Path pom) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
  }

  private static String child(Element parent, String name) {
    return child(parent, name, Element.class).getTextContent().strip();
  }

  private static Element child(Element parent, String name, Class<Element> type) {
    List<Element> found = children(parent, name);
    assertThat(found).as("<%s> in <%s>", name, parent.getTagName()).hasSize(1);
    return type.cast(found.get(0));
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }
}
