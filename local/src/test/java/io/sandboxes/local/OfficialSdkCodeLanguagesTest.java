package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.local.internal.docker.BaseImage;
import io.sandboxes.local.internal.docker.CodeInterpreterImage;
import io.sandboxes.local.internal.docker.DockerRuntime;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 25, item 7, through the official {@code @e2b/code-interpreter} JS SDK (pinned in {@code
 * src/test/node/package.json}): bash, JavaScript, R and Java contexts as E2B's own SDK tests use them, the
 * text of results, and a timed-out run giving its context back promptly (under 4 s here; bench figures say how fast), for each
 * language. Node and npm are required; without them this test fails rather than skipping.
 */
@ExtendWith(SharedServer.class)
class OfficialSdkCodeLanguagesTest {

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  @DisplayName("the official code-interpreter SDK runs bash, JavaScript, R and Java as E2B's tests do, and a timeout leaves each context usable at once")
  void languagesThroughTheOfficialSdk(LocalServer server) throws Exception {
    NodeScripts node = NodeScripts.install("node-code-languages", "code-languages.mjs");
    // the image is built before (minutes, once per machine), not inside the SDK's create
    try (DockerRuntime docker = DockerRuntime.connect()) {
      CodeInterpreterImage.ensure(docker, BaseImage.ensure(docker, System.err::println), System.err::println);
    }
    String out = node.run(NodeScripts.env(server), Duration.ofMinutes(6), "node", "code-languages.mjs");
    assertThat(out).as("the script printed:\n%s", out).startsWith("exit 0");
    Map<String, String> steps = NodeScripts.steps(out);
    assertThat(steps).as("the script printed:\n%s", out)
        .containsEntry("js.log", "[\"Hello World!\\n\"]")
        .containsEntry("js.esm", "[\"function\\n\"]")
        .containsEntry("js.await", "Hello World!")
        .containsEntry("js.cwd", "/home/user")
        .containsEntry("js.env", "supertest")
        .containsEntry("js.envRun", "bar")
        .containsEntry("js.envAfter", "default")
        .containsEntry("js.state", "42")
        .containsEntry("js.error", "ReferenceError|undefinedThing is not defined|true")
        .containsEntry("bash.env", "supertest")
        .containsEntry("bash.envRun", "bar")
        .containsEntry("bash.envAfter", "default")
        .containsEntry("bash.cwd", "/home/user")
        .containsEntry("bash.state", "42 /tmp")
        .containsEntry("bash.error", "partial|\"\"|4")
        .containsEntry("r.env", "[1] \"supertest\"")
        .containsEntry("r.envRun", "[1] \"bar\"")
        .containsEntry("r.envAfter", "[1] \"default\"")
        .containsEntry("r.envOverwrite", "[1] \"overwrite\"|[1] \"supertest\"")
        .containsEntry("r.cwd", "[1] \"/home/user\"")
        .containsEntry("r.run", "[\"out\\n\"]|[1] 42|undefined")
        .containsEntry("r.error", "ERROR|\"Error: boom\\n\"")
        .containsEntry("java.env", "supertest")
        .containsEntry("java.envRun", "bar")
        .containsEntry("java.envAfter", "default")
        .containsEntry("java.envOverwrite", "overwrite|supertest")
        .containsEntry("java.cwd", "/home/user")
        .containsEntry("java.run", "[\"out\\n\"]|42")
        .containsEntry("java.error", "java.lang.ArithmeticException|/ by zero")
        .containsEntry("ctx.languages", "javascript /tmp bash /home/user")
        .containsEntry("ctx.separate", "only here|undefined")
        .containsEntry("ctx.listed", "bash,javascript")
        .containsEntry("ctx.restart", "undefined")
        .containsEntry("py.texts", "a|1.0|['a', 1]|(no result)")
        .containsEntry("timeout.python", "TimeoutError yes promptly")
        .containsEntry("timeout.bash", "TimeoutError yes promptly")
        .containsEntry("timeout.js", "TimeoutError yes promptly")
        .containsEntry("timeout.r", "TimeoutError yes promptly")
        .containsEntry("timeout.java", "TimeoutError yes promptly")
        .containsEntry("done", "ok")
        // refused, not run: the SDK shows a 400's body only with diagnostics on (the message naming
        // the language and what is served is CodeInterpreterLanguagesTest's)
        .containsEntry("unknown", "SandboxError 400 Bad Request");
  }
}
