package io.sandboxes.springai;

import static io.sandboxes.springai.ScriptedChatModel.call;
import static io.sandboxes.springai.ScriptedChatModel.calls;
import static io.sandboxes.springai.ScriptedChatModel.results;
import static io.sandboxes.springai.ScriptedChatModel.says;
import static org.assertj.core.api.Assertions.assertThat;

import io.sandboxes.SandboxInfo;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.SandboxToolkit;
import io.sandboxes.dsl.Sandboxes;
import io.sandboxes.local.LocalServer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configuration in a Spring context, the tools driven through a {@code ChatClient} by a
 * scripted model that runs tool calls as Spring AI's models do, against real local sandboxes. The
 * application's own {@link SandboxClient} bean points at a local server this test watches.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SandboxesAutoConfigurationTest {
  private LocalServer server;
  private SandboxClient observer;

  @BeforeAll
  void start() {
    server = LocalServer.builder().build().start();
    observer = Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey());
  }

  @AfterAll
  void stop() {
    if (observer != null) {
      observer.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SandboxesAutoConfiguration.class))
        .withBean(SandboxClient.class, () -> Sandboxes.at(server.apiUrl(), server.sandboxUrl(), server.apiKey()));
  }

  private List<String> running() {
    return observer.list().stream().map(SandboxInfo::id).toList();
  }

  private static String ask(ChatClient chat, String conversation) {
    return chat.prompt().user("go").toolContext(Map.of(ChatMemory.CONVERSATION_ID, conversation)).call().content();
  }

  @Test
  @DisplayName("the context has the tools as callbacks; a chat writes and runs, two conversations never share, and shutdown kills every sandbox")
  void toolsThroughAChatClient() {
    List<String> before = running();
    AtomicReference<List<String>> aliceGot = new AtomicReference<>();
    AtomicReference<List<String>> bobGot = new AtomicReference<>();
    AtomicReference<List<String>> made = new AtomicReference<>();
    runner().run(context -> {
      assertThat(context).hasNotFailed();
      ToolCallbackProvider callbacks = context.getBean("sandboxToolCallbacks", ToolCallbackProvider.class);
      assertThat(Arrays.stream(callbacks.getToolCallbacks()).map(c -> c.getToolDefinition().name()))
          .containsExactlyInAnyOrder("run_command", "run_python", "read_file", "write_file", "list_folder");
      assertThat(Arrays.stream(callbacks.getToolCallbacks()).filter(c -> c.getToolDefinition().name().equals("write_file"))
          .findFirst().orElseThrow().getToolDefinition().inputSchema()).contains("\"path\"", "\"content\"").doesNotContain("context");
      // the tools that reach the network say what the sandbox's network is; the file tools need not
      assertThat(Arrays.stream(callbacks.getToolCallbacks()).filter(c -> c.getToolDefinition().name().startsWith("run_")))
          .hasSize(2).allSatisfy(c -> assertThat(c.getToolDefinition().description())
              .contains("Network: the sandbox has no network access (closed by default)").doesNotContain("HTTP 403 or refuses"));

      ChatClient alice = ChatClient.builder(new ScriptedChatModel(
          p -> calls(call("write_file", "{\"path\":\"/home/user/notes.txt\",\"content\":\"hello\"}"),
              call("run_command", "{\"command\":\"cat /home/user/notes.txt; echo \\\" $((6*7))\\\"\"}")),
          p -> {
            aliceGot.set(results(p));
            return says("done");
          })).defaultToolCallbacks(callbacks).build();
      assertThat(ask(alice, "alice")).isEqualTo("done");
      assertThat(aliceGot.get()).containsExactly("wrote 5 bytes to /home/user/notes.txt", "exit code: 0\nstdout:\nhello 42\n");

      ChatClient bob = ChatClient.builder(new ScriptedChatModel(
          p -> calls(call("read_file", "{\"path\":\"/home/user/notes.txt\"}")),
          p -> {
            bobGot.set(results(p));
            return says("not there");
          })).defaultToolCallbacks(callbacks).build();
      assertThat(ask(bob, "bob")).isEqualTo("not there");
      assertThat(bobGot.get().get(0)).startsWith("error:");

      SandboxToolkit toolkit = context.getBean(SandboxToolkit.class);
      made.set(List.of(toolkit.sandboxId("alice"), toolkit.sandboxId("bob")));
      assertThat(made.get().get(0)).isNotEqualTo(made.get().get(1));
      assertThat(running()).containsAll(made.get());
    });
    assertThat(running()).as("sandboxes after the context closed").doesNotContainAnyElementsOf(made.get())
        .containsExactlyInAnyOrderElementsOf(before);
  }

  @Test
  @DisplayName("sandboxes.* properties reach the tools: the output limit cuts, the command timeout stops, as text")
  void propertiesApply() {
    runner().withPropertyValues("sandboxes.output-limit=500", "sandboxes.command-timeout=2s").run(context -> {
      SandboxSpringTools tools = context.getBean(SandboxSpringTools.class);
      String cut = tools.runCommand("seq 1 10000", null);
      assertThat(cut).contains("characters cut; 48894 in all").hasSizeLessThan(700);
      long started = System.nanoTime();
      assertThat(tools.runCommand("sleep 30", null)).startsWith("error:").containsIgnoringCase("time");
      assertThat((System.nanoTime() - started) / 1_000_000_000L).isLessThan(25);
    });
  }
}
