package io.sandboxes.langchain4j;

import static io.sandboxes.langchain4j.ScriptedModel.call;
import static io.sandboxes.langchain4j.ScriptedModel.results;
import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.memory.ChatMemoryAccess;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import io.sandboxes.SandboxInfo;
import io.sandboxes.dsl.SandboxClient;
import io.sandboxes.dsl.Sandboxes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The tools driven the way LangChain4j drives them: an AI service, a model that calls tools, real local sandboxes. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SandboxToolsTest {
  interface Assistant extends ChatMemoryAccess {
    String chat(@MemoryId String conversation, @UserMessage String message);
  }

  private SandboxClient sandboxes;

  @BeforeAll
  void start() {
    sandboxes = Sandboxes.local();
  }

  @AfterAll
  void stop() {
    if (sandboxes != null) {
      sandboxes.close();
    }
  }

  private Assistant assistant(ScriptedModel model, SandboxTools tools) {
    return AiServices.builder(Assistant.class)
        .chatModel(model)
        .chatMemoryProvider(id -> MessageWindowChatMemory.builder().id(id).maxMessages(50)
            .chatMemoryStore(tools.releasingOnDelete(new InMemoryChatMemoryStore())).build())
        .toolProvider(tools)
        .build();
  }

  private boolean running(String sandboxId) {
    return sandboxes.list().stream().map(SandboxInfo::id).anyMatch(sandboxId::equals);
  }

  @Test
  @DisplayName("a model is told the sandbox's network policy, writes a file, runs a command over it and gets both results back as text")
  void toolsRoundTrip() {
    AtomicReference<List<String>> got = new AtomicReference<>();
    AtomicReference<List<String>> offered = new AtomicReference<>();
    AtomicReference<String> described = new AtomicReference<>();
    ScriptedModel model = new ScriptedModel(
        r -> {
          offered.set(r.toolSpecifications().stream().map(ToolSpecification::name).sorted().toList());
          described.set(r.toolSpecifications().stream().filter(s -> s.name().equals("run_command")).findFirst().orElseThrow()
              .description());
          return AiMessage.from(call("write_file", "{\"path\":\"/home/user/notes.txt\",\"content\":\"hello\"}"),
              call("run_command", "{\"command\":\"cat /home/user/notes.txt; echo \\\" $((6*7))\\\"\"}"));
        },
        r -> {
          got.set(results(r));
          return AiMessage.from("done");
        });
    try (SandboxTools tools = SandboxTools.builder(sandboxes).build()) {
      assertThat(assistant(model, tools).chat("alice", "note hello, then compute")).isEqualTo("done");
      assertThat(offered.get()).containsExactly("list_folder", "read_file", "run_command", "run_python", "write_file");
      assertThat(described.get()).as("what the model is told of the network")
          .contains("Network: the sandbox has no network access (closed by default)").doesNotContain("HTTP 403 or refuses");
      assertThat(got.get()).containsExactly("wrote 5 bytes to /home/user/notes.txt", "exit code: 0\nstdout:\nhello 42\n");
    }
  }

  @Test
  @DisplayName("two conversations never share a sandbox: one's file is not there for the other, and the miss is text")
  void conversationsAreIsolated() {
    AtomicReference<List<String>> bobSaw = new AtomicReference<>();
    try (SandboxTools tools = SandboxTools.builder(sandboxes).build()) {
      assistant(new ScriptedModel(
          r -> AiMessage.from(call("write_file", "{\"path\":\"/home/user/secret.txt\",\"content\":\"alice's\"}")),
          r -> AiMessage.from("saved")), tools).chat("alice", "keep this");
      assistant(new ScriptedModel(
          r -> AiMessage.from(call("read_file", "{\"path\":\"/home/user/secret.txt\"}"), call("list_folder", "{\"path\":\"/home/user\"}")),
          r -> {
            bobSaw.set(results(r));
            return AiMessage.from("nothing there");
          }), tools).chat("bob", "read alice's file");
      assertThat(bobSaw.get().get(0)).startsWith("error:");
      assertThat(bobSaw.get().get(1)).doesNotContain("secret.txt");
      assertThat(tools.sandboxId("alice")).isNotNull().isNotEqualTo(tools.sandboxId("bob"));
    }
  }

  @Test
  @DisplayName("a long output comes back cut in the middle, with a marker giving its full length")
  void longOutputIsCut() {
    AtomicReference<List<String>> got = new AtomicReference<>();
    try (SandboxTools tools = SandboxTools.builder(sandboxes).outputLimit(1000).build()) {
      assistant(new ScriptedModel(
          r -> AiMessage.from(call("run_python", "{\"code\":\"print('a' + 'x' * 9998 + 'z')\"}")),
          r -> {
            got.set(results(r));
            return AiMessage.from("long");
          }), tools).chat("carol", "print a lot");
      String text = got.get().get(0);
      assertThat(text).startsWith("exit code: 0\nstdout:\na").endsWith("z\n").contains("characters cut; 10001 in all");
      assertThat(text.length()).isLessThan(1100);
    }
  }

  @Test
  @DisplayName("a command past its time is stopped and reported as text, and the conversation goes on")
  void failuresAreText() {
    AtomicReference<List<String>> got = new AtomicReference<>();
    try (SandboxTools tools = SandboxTools.builder(sandboxes).commandTimeout(Duration.ofSeconds(2)).build()) {
      long started = System.nanoTime();
      String answer = assistant(new ScriptedModel(
          r -> AiMessage.from(call("run_command", "{\"command\":\"sleep 30\"}"), call("run_command", "{\"command\":\"exit 3\"}")),
          r -> {
            got.set(results(r));
            return AiMessage.from("it timed out");
          }), tools).chat("dave", "wait");
      assertThat(answer).isEqualTo("it timed out");
      assertThat(got.get().get(0)).startsWith("error:").containsIgnoringCase("time");
      assertThat(got.get().get(1)).isEqualTo("exit code: 3");
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(25));
    }
  }

  @Test
  @DisplayName("clearing a conversation's memory or evicting it kills its sandbox; closing the tools kills the rest")
  void evictionAndCloseKillSandboxes() {
    SandboxTools tools = SandboxTools.builder(sandboxes).build();
    String erin;
    String frank;
    try {
      Assistant assistant = assistant(new ScriptedModel(
          r -> AiMessage.from(call("run_command", "{\"command\":\"true\"}")), r -> AiMessage.from("ok"),
          r -> AiMessage.from(call("run_command", "{\"command\":\"true\"}")), r -> AiMessage.from("ok"),
          r -> AiMessage.from(call("run_command", "{\"command\":\"true\"}")), r -> AiMessage.from("ok")), tools);
      assistant.chat("erin", "go");
      assistant.chat("frank", "go");
      erin = tools.sandboxId("erin");
      frank = tools.sandboxId("frank");
      assertThat(erin).isNotNull();
      assertThat(frank).isNotNull();
      assertThat(running(erin)).isTrue();
      assistant.getChatMemory("erin").clear();
      assertThat(tools.conversations()).containsExactly("frank");
      assertThat(running(erin)).as("erin's sandbox after her memory was cleared").isFalse();
      assertThat(running(frank)).isTrue();
      assistant.chat("george", "go");
      String george = tools.sandboxId("george");
      assertThat(george).isNotNull();
      assertThat(tools.evict(assistant, "george")).isTrue();
      assertThat(running(george)).as("george's sandbox after his memory was evicted").isFalse();
    } finally {
      tools.close();
    }
    assertThat(running(frank)).as("frank's sandbox after the tools were closed").isFalse();
    assertThat(tools.runCommand("frank", "true")).startsWith("error:").contains("closed");
  }
}
