package io.sandboxes.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The official {@code e2b} npm SDK (pinned in {@code src/test/node/package.json}) against the
 * local server: a Node script drives it step by step and this test reads what each step printed.
 * Node and npm are required; without them this test fails rather than skipping.
 */
@ExtendWith(SharedServer.class)
class OfficialSdkConformanceTest {

  @Test
  @Timeout(value = 15, unit = TimeUnit.MINUTES)
  @DisplayName("the official e2b JS SDK against the local server: create, run, files, list, connect, re-attach, PTY, watch, pause/resume, snapshots, volumes, deadline, egress allow-list, a forwarded port, fork, kill; @e2b/code-interpreter against code-interpreter-v1")
  void officialSdkAgainstLocalServer(LocalServer server, io.sandboxes.e2b.E2BSandboxProvider provider) throws Exception {
    NodeScripts node = NodeScripts.install("node-conformance", "conformance.mjs");

    // the code interpreter's image is built before (minutes, once per machine), not by the SDK's create
    try (io.sandboxes.local.internal.docker.DockerRuntime docker = io.sandboxes.local.internal.docker.DockerRuntime.connect()) {
      io.sandboxes.local.internal.docker.CodeInterpreterImage.ensure(docker,
          io.sandboxes.local.internal.docker.BaseImage.ensure(docker, System.err::println), System.err::println);
    }
    // issue 13, item 9: the Java client's listing (live handles) leaves a deadline alone; the SDK
    // reads the deadline afterwards and says whether it moved
    String out;
    try (io.sandboxes.e2b.LiveSandbox listed = provider.api().create(io.sandboxes.SandboxSpec.defaults()
        .withTimeout(Duration.ofMinutes(2)).withMetadata(Map.of("suite", "conformance-java-list")))) {
      java.time.Instant endAt = provider.api().info(listed.id()).endAt();
      assertThat(provider.list()).extracting(io.sandboxes.Sandbox::id).contains(listed.id());
      Map<String, String> env = NodeScripts.env(server,
          "WITNESS_ALLOWED", server.egressProbe().allowedHost(),
          "WITNESS_DENIED", server.egressProbe().deniedHost(),
          "JAVA_LISTED_ID", listed.id(),
          "JAVA_LISTED_END_AT", endAt.toString());
      out = node.run(env, Duration.ofMinutes(8), "node", "conformance.mjs");
    }
    assertThat(out).as("conformance script output:\n%s", out).startsWith("exit 0");

    Map<String, String> steps = NodeScripts.steps(out);
    assertThat(steps).as("steps printed by the script:\n%s", out)
        .containsEntry("created", "yes")
        .containsEntry("run.stdout", "hello from-create|user")
        .containsEntry("run.exitCode", "0")
        .containsEntry("nonzero", "CommandExitError exitCode=7 stdout=out stderr=err")
        .containsEntry("background.pid", "positive")
        .containsEntry("background.wait", "0 background done")
        .containsEntry("files.write", "/home/user/conf/data.txt")
        .containsEntry("files.read", "written by the node sdk")
        .containsEntry("files.list", "data.txt:file")
        .containsEntry("files.exists", "false")
        .containsEntry("list", "found")
        .containsEntry("list.metadata", "node sdk")
        .containsEntry("getInfo", "true base running conformance")
        .containsEntry("connect", "from-create")
        .containsEntry("reattach", "got the later output and the exit")
        .containsEntry("pty.resize", "stty saw 24 80 then 30 100")
        .containsEntry("pty.kill", "true")
        .containsEntry("watchDir", "new.txt:create")
        .containsEntry("pause", "true")
        .containsEntry("pause.again", "false")
        .containsEntry("paused.state", "paused")
        .containsEntry("resume.process", "alive")
        .containsEntry("resumed.state", "running")
        .containsEntry("snapshot.id", "name:default")
        .containsEntry("snapshot.list", "found")
        .containsEntry("snapshot.child", "written by the node sdk")
        .containsEntry("snapshot.deleteInUse", "refused (SandboxError)")
        .containsEntry("snapshot.delete", "true")
        .containsEntry("volume.survives", "persisted")
        .containsEntry("volume.listed", "found")
        .containsEntry("volume.destroy", "true")
        .containsEntry("deadline", "SandboxNotFoundError")
        .containsEntry("egress.allowed", "200")
        .containsEntry("egress.denied", "403") // the gateway answers a refusal itself, saying why
        .containsEntry("preview", "written by the node sdk")
        .containsEntry("killDuringCommand", "TimeoutError (killed)")
        .containsEntry("kill", "true")
        .containsEntry("kill.again", "false")
        .containsEntry("missing.connect", "SandboxNotFoundError")
        .containsEntry("missing.getInfo", "SandboxNotFoundError")
        .containsEntry("done", "ok");
    // fidelity (issue 13): listing order, filters and paging; signed URLs; metrics range; alias lookup; base tools; egress note
    assertThat(steps).as("steps printed by the script:\n%s", out)
        .containsEntry("fid.list.desc", "2,1,0")
        .containsEntry("fid.list.asc", "0,1,2")
        .containsEntry("fid.list.ascPaged", "0,1,2")
        .containsEntry("fid.list.descPaged", "2,1,0")
        .containsEntry("fid.list.startedAfter", "1,2")
        .containsEntry("fid.list.template", "2")
        .containsEntry("fid.list.templateBase", "0,1")
        .containsEntry("fid.signed.fresh", "200 signed")
        .containsEntry("fid.signed.expiredDownload", "401 signature is already expired")
        .containsEntry("fid.signed.expiredUpload", "401 signature is already expired")
        .containsEntry("fid.signed.notWritten", "false")
        .containsEntry("fid.metrics.beforeCreate", "0")
        .containsEntry("fid.metrics.range", "only the samples in range")
        .containsEntry("fid.alias.base", "true")
        .containsEntry("fid.alias.snapshot", "true")
        .containsEntry("fid.alias.missing", "false")
        .containsEntry("fid.tools", "42|tools-ok")
        .containsEntry("fid.egressLog.default", "egress: nothing reachable: allow_internet_access was not given, and this server's"
            + " default is deny (E2B's is open; see --internet-by-default)")
        .containsEntry("fid.egressLog.closed", "egress: nothing reachable (allow_internet_access: false, as asked)");

    // cloud-mode items (issue 13, items 9 and 11) as the SDK shows them: v2 create and connect, the
    // identity headers the server is sent (the Java client sends the same names, less the
    // browser header E2B's SDK sends from Node too), listings that move no deadline
    java.util.TreeSet<String> javaNames = new java.util.TreeSet<>(io.sandboxes.e2b.internal.Identity.apiHeaderValues().keySet());
    javaNames.add("user-agent");
    java.util.TreeSet<String> sdkNames = new java.util.TreeSet<>(List.of(steps.getOrDefault("fid.identity.apiHeaders", "").split(",")));
    sdkNames.remove("browser");
    assertThat(sdkNames).as("identity headers of the official SDK, less browser, against the Java client's").isEqualTo(javaNames);
    assertThat(steps).as("identity steps printed by the script:\n%s", out)
        .containsEntry("fid.identity.paths", "/v2/sandboxes /v2/sandboxes/{id}/connect")
        .containsEntry("fid.identity.apiHeaders", "browser,lang,lang_version,package_version,publisher,sdk_runtime,system,user-agent")
        .containsEntry("fid.identity.apiEveryRequest", "true")
        .containsEntry("fid.identity.apiAgent", "e2b-js-sdk")
        .containsEntry("fid.identity.envdHeaders", "user-agent")
        .containsEntry("fid.identity.envdAgent", "e2b-js-sdk")
        .containsEntry("fid.list.deadline", "unchanged")
        .containsEntry("fid.javaList.deadline", "unchanged");

    // fork (issue 13, item 4)
    assertThat(steps).as("fork steps printed by the script:\n%s", out)
        .containsEntry("fork.count", "2 sandboxes")
        .containsEntry("fork.ids", "distinct")
        .containsEntry("fork.files", "written before the fork|written before the fork")
        .containsEntry("fork.env", "from-the-parent|from-the-parent")
        .containsEntry("fork.metadata", "parent|parent")
        .containsEntry("fork.diverge", "false|false|written before the fork|written before the fork")
        .containsEntry("fork.parent", "running process alive")
        .containsEntry("fork.instance", "written before the fork")
        .containsEntry("fork.kill", "true|true|true")
        .containsEntry("fork.killedParent", "SandboxNotFoundError");

    // templates (issue 14): Template.build against the local build API
    assertThat(steps).as("template steps printed by the script:\n%s", out)
        .containsEntry("tpl.build", "built")
        // the server's lines as E2B's template builder prints them (e2b-dev/infra, the orchestrator's build phases): a layer's
        // heading "[prefix] TYPE args [hash]" (all the step's arguments joined by spaces, so a COPY's empty user and mode leave
        // spaces), "CACHED " before a layer taken as it is (E2B logs a template base so always), then "Build finished, took 3s"
        .containsEntry("tpl.logs", "CACHED [base] FROM TEMPLATE base [<hash>] | [builder 1/4] COPY hello.txt /home/user/app/   [<hash>]"
            + " | [builder 2/4] RUN echo built-by-the-sdk > /home/user/app/built.txt [<hash>] | [builder 3/4] ENV TPL_VAR from-the-template"
            + " [<hash>] | [builder 4/4] WORKDIR /home/user/app [<hash>] | [finalize] Finalizing template build [<hash>]"
            + " | Build finished, took <n>s")
        .containsEntry("tpl.exists", "true false")
        .containsEntry("tpl.sandbox", "copied by the sdk|built-by-the-sdk|from-the-template|/home/user/app|user")
        .containsEntry("tpl.sandboxFile", "copied by the sdk")
        .containsEntry("tpl.rebuild", "upload skipped, steps cached")
        .containsEntry("tpl.buildTags", "beta,v2")
        .containsEntry("tpl.tagSandbox", "tagged-build first-build")
        .containsEntry("tpl.glob", "hello.txt second.txt matched too")
        .containsEntry("tpl.assignTags", "true prod")
        .containsEntry("tpl.getTags", "beta=v2,default=first,prod=v2,v2=v2")
        .containsEntry("tpl.prodSandbox", "tagged-build")
        .containsEntry("tpl.removeTags", "default,v2")
        .containsEntry("tpl.removeDefault", "TemplateError: 400: cannot delete the 'default' tag")
        .containsEntry("tpl.removedTag", "SandboxError (404)")
        .containsEntry("tpl.fail", "BuildError: step 1 failed with exit code 4")
        .containsEntry("tpl.failExists", "false")
        .containsEntry("tpl.delete", "true")
        .containsEntry("tpl.deleted", "SandboxError (404 not found)");

    // the code interpreter (issue 15): @e2b/code-interpreter against code-interpreter-v1
    assertThat(steps).as("code interpreter steps printed by the script:\n%s", out)
        .containsEntry("ci.text", "42 counted")
        .containsEntry("ci.streamed", "out:out one|err:err one")
        .containsEntry("ci.logs", "out one|err one")
        .containsEntry("ci.state", "82")
        .containsEntry("ci.png", "png")
        .containsEntry("ci.chart.line", "line 1 [[1,3],[2,1],[3,2]]")
        .containsEntry("ci.chart.bar", "bar Sales Shop|Amount (EUR)|EUR sold:a=3,sold:b=5,sold:c=2")
        .containsEntry("ci.data", "{\"n\":[1,2],\"s\":[\"x\",null]}")
        .containsEntry("ci.error", "ValueError bad value traceback ValueError")
        .containsEntry("ci.context.separate", "only in a|False")
        .containsEntry("ci.context.cwd", "python /home/user /tmp")
        .containsEntry("ci.context.list", "both")
        .containsEntry("ci.context.restart", "NameError")
        .containsEntry("ci.context.remove", "gone")
        .containsEntry("ci.context.removedRun", "NotFoundError")
        .containsEntry("ci.timeout", "TimeoutError promptly")
        .containsEntry("ci.afterTimeout", "after the timeout promptly");
  }
}
