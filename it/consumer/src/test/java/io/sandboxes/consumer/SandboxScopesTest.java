package io.sandboxes.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sandboxes.ExecResult;
import io.sandboxes.Sandbox;
import io.sandboxes.SandboxException;
import io.sandboxes.SandboxState;
import io.sandboxes.Tars;
import io.sandboxes.junit.E2BSandbox;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code @E2BSandbox} the three ways a user's test asks for a sandbox: a static field (one for the
 * class), an instance field (one per test) and a test parameter (one per test), each doing real
 * work in its sandbox. The per-test sandboxes must be destroyed when their test ends, which is the
 * JUnit store closing them: {@link #perTestSandboxesWereDestroyed()} checks that.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SandboxScopesTest {

  /** One sandbox for the class: the project is uploaded once, and each test builds on the last. */
  @E2BSandbox(timeoutSeconds = 600)
  static Sandbox project;

  /** A fresh sandbox for every test. */
  @E2BSandbox
  Sandbox scratch;

  private static final Set<String> projectIds = ConcurrentHashMap.newKeySet();
  private static final List<Sandbox> perTest = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void uploadProject() throws Exception {
    Path folder = Path.of(SandboxScopesTest.class.getResource("/project").toURI());
    try (InputStream tar = Tars.pack(folder)) {
      project.importFiles("/home/user", tar);
    }
  }

  @BeforeEach
  void remember() {
    projectIds.add(project.id());
    perTest.add(scratch);
  }

  @Test
  @Order(1)
  void theUploadedProjectPassesItsTestsAndRunsInTheClassSandbox() {
    ExecResult tests = project.exec("cd /home/user/project && python3 -m unittest -v");
    assertThat(tests.exitCode()).as(tests.stderr()).isZero();
    assertThat(tests.stderr()).contains("Ran 2 tests").contains("OK");

    ExecResult run = project.exec("cd /home/user/project && python3 wordcount.py poem.txt > counts.txt");
    assertThat(run.exitCode()).as(run.stderr()).isZero();
  }

  @Test
  @Order(2)
  void theClassSandboxStillHoldsWhatTheFirstTestMade() {
    assertThat(project.readFile("/home/user/project/counts.txt"))
        .isEqualTo("the 4\ntest 2\npoem 1\nreads 1\nruns 1\nsandbox 1\n");
  }

  @Test
  @Order(3)
  void anInstanceFieldIsASandboxOfThisTest() {
    assertThat(scratch.id()).isNotEqualTo(project.id());
    scratch.writeFile("/home/user/note.txt", "written by test 3");
    assertThat(scratch.readFile("/home/user/note.txt")).isEqualTo("written by test 3");
    assertThat(scratch.exec("test -e /home/user/project").exitCode()).as("the project is not uploaded here").isEqualTo(1);
  }

  @Test
  @Order(4)
  void theNextTestGetsAFreshOne() {
    assertThat(scratch.exec("test -e /home/user/note.txt").exitCode()).as("test 3's file").isEqualTo(1);
    assertThat(perTest.stream().map(Sandbox::id).distinct()).hasSize(perTest.size());
  }

  @Test
  @Order(5)
  void aParameterGetsItsOwnSandbox(@E2BSandbox Sandbox mine) {
    perTest.add(mine);
    assertThat(mine.id()).isNotIn(project.id(), scratch.id());
    ExecResult python = mine.exec("python3 -c 'import sys; print(sys.version_info.major, 6 * 7)'");
    assertThat(python.exitCode()).as(python.stderr()).isZero();
    assertThat(python.stdout()).isEqualTo("3 42\n");
  }

  @AfterAll
  static void perTestSandboxesWereDestroyed() {
    assertThat(projectIds).as("the static field's sandbox, seen by each test").hasSize(1);
    assertThat(perTest).as("instance-field sandboxes (5) and the parameter's (1)").hasSize(6);
    assertThat(perTest.stream().map(Sandbox::id).distinct()).hasSize(6);
    for (Sandbox s : perTest) {
      assertThat(s.status()).as(s.id() + " after its test").isEqualTo(SandboxState.KILLED);
      assertThatThrownBy(() -> s.exec("true")).as(s.id() + " after its test").isInstanceOf(SandboxException.class);
    }
  }
}
